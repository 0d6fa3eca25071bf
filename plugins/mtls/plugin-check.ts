/**
 * Is the mtlswhitelist Traefik plugin installed? (API.md §4.8 GET /api/mtls/plugin/check, G6/G8)
 * It is when `experimental.plugins` of the static config holds module
 * `github.com/smerschjohann/mtlswhitelist` or a key equal to `mtlswhitelist` (case-insensitive).
 */
import type { DeclaredPlugins } from '../../model/static-config.ts';

export const PLUGIN_NAME = 'mtlswhitelist';
export const PLUGIN_MODULE = 'github.com/smerschjohann/mtlswhitelist';

export interface PluginCheck {
  installed: boolean;
  plugin_name: typeof PLUGIN_NAME;
  key: string | null;
  module_name: string | null;
  version: string | null;
  static_config_path: string | null;
}

/** The check's answer from the static config as the shared reader sees it. */
export function checkPlugin(declared: DeclaredPlugins): PluginCheck {
  const entries = (declared.entries ?? []).filter((e) => !e.local);
  // a module match wins over a key match: the key may name some other module
  const found =
    entries.find((e) => e.module_name?.toLowerCase() === PLUGIN_MODULE) ??
    entries.find((e) => e.key.toLowerCase() === PLUGIN_NAME);
  return {
    installed: found !== undefined,
    plugin_name: PLUGIN_NAME,
    key: found?.key ?? null,
    module_name: found?.module_name ?? null,
    version: found?.version ?? null,
    static_config_path: declared.path,
  };
}

/** The generator's view (MtlsState.plugin): null while the static config cannot be read. */
export function generatorPlugin(declared: DeclaredPlugins): { installed: boolean; key: string } | null {
  if (declared.entries === null) return null;
  const check = checkPlugin(declared);
  return { installed: check.installed, key: check.key ?? PLUGIN_NAME };
}
