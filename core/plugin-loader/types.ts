/** Public shapes of the third-party plugin loader (API.md §6): records, statuses and the registry decorator. */
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';

/** Outcome of one plugin: `loaded`, `failed` (503), `incompatible` (api_version, 503) or `disabled` (404). */
export type ExtPluginStatus = 'loaded' | 'failed' | 'disabled' | 'incompatible';

/** One route a loaded plugin serves. */
export interface ExtPluginRoute {
  method: string;
  url: string;
}

/** One entry of GET /api/system/plugins. */
export interface ExtPluginRecord {
  name: string;
  /** Directory name inside PLUGINS_DIR; null for an enabled name that has no directory. */
  dir: string | null;
  version: string | null;
  api_version: string | null;
  prefix: string;
  status: ExtPluginStatus;
  /** `stack` is null for problems found by the loader itself (manifest, dependencies, prefix). */
  error: { message: string; stack: string | null } | null;
  routes: ExtPluginRoute[];
  loaded_at: string | null;
}

/** What the loader exposes as `app.extPlugins` (read by plugins/system). */
export interface ExtPluginRegistry {
  /** Restart counter of this app instance (X-App-Generation). */
  readonly generation: number;
  /** Copies of all records, sorted by name then dir. */
  list(): ExtPluginRecord[];
}

/** Read-only view of a core collection handed to plugins (`opts.core.*`). */
export interface ReadOnlyView {
  list(): unknown[];
  get(id: string): unknown;
}

/** One entry of the plugin store. */
export interface StoreEntry {
  key: string;
  value: unknown;
  created_at: string;
  updated_at: string;
}

/** The `opts.store` of a plugin: YAML files under data/ext/<name>/. */
export interface PluginStore {
  get(key: string): Promise<unknown>;
  list(): Promise<StoreEntry[]>;
  put(key: string, value: unknown): Promise<StoreEntry>;
  delete(key: string): Promise<boolean>;
}

/** The options object a plugin's default export receives (API.md §6). */
export interface ExtPluginOptions {
  config: Record<string, unknown>;
  logger: FastifyBaseLogger;
  store: PluginStore;
  core: { middlewares: ReadOnlyView; services: ReadOnlyView; resources: ReadOnlyView };
  errors: {
    create(status: number, id: string, message: string, details?: { path: string; message: string }[]): Error;
    catalogue: readonly string[];
  };
  host: { api_version: string; app_version: string; data_dir: string };
}

/** A plugin entry's default export. */
export type ExtPluginFunction = FastifyPluginAsync<ExtPluginOptions>;

declare module 'fastify' {
  interface FastifyInstance {
    extPlugins: ExtPluginRegistry;
  }
}
