/** settings.yaml: the few runtime-changeable settings (API.md §3.1, §5), one store document for all groups. */
import { Type, type Static } from '@sinclair/typebox';
import type { YamlStore, StoreDocument } from './store/types.ts';

export const SettingsSchema = Type.Object({
  proxy_static_config_path: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** the compose file publishing Gerbil's ports (API.md §4.20); wins over `stack.compose_file` */
  compose_file: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  // Traefik's plugins-local directory on this host (API.md §4.20); wins over PROXY_PLUGINS_LOCAL_DIR
  plugins_local_dir: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  seeded_templates: Type.Optional(Type.Array(Type.String())),
});
export type Settings = Static<typeof SettingsSchema>;

declare module 'fastify' {
  interface FastifyInstance {
    /** settings.yaml (runtime settings written by the API; hand edits are picked up). */
    settings: StoreDocument<Settings>;
  }
}

/** Opens settings.yaml through the store. */
export function openSettings(store: YamlStore): Promise<StoreDocument<Settings>> {
  return store.document<Settings>({ path: 'settings.yaml', schema: SettingsSchema, initial: () => ({}) });
}
