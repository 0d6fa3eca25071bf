/** Built from config/templates/*.yaml by the vite plugin in vite.config.ts. */
declare module 'virtual:templates' {
  export interface ObjectTemplate {
    id: string;
    name: string;
    type: string;
    protocol?: string;
    description?: string;
    config: Record<string, unknown>;
  }
  export const middlewareTemplates: ObjectTemplate[];
  export const serviceTemplates: ObjectTemplate[];
}
