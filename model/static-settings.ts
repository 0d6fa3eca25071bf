/**
 * Where the static configuration group's host paths come from (docs/API.md "Static settings"):
 * settings.yaml `compose_file` and `plugins_local_dir` win over `stack.compose_file`
 * (STACK_COMPOSE_FILE) and `proxy.plugins_local_dir` (PROXY_PLUGINS_LOCAL_DIR). In model/ because the
 * static group (which sets them) and the plugins group (which vendors into plugins-local, and is
 * registered before static) both resolve them.
 */
import type { Settings } from '../core/settings.ts';
import type { AppConfig } from '../core/config/schema.ts';

export type StaticSettingName = 'compose_file' | 'plugins_local_dir';
export type SettingSource = 'settings' | 'env' | 'unset';

/** The env/config value behind each setting. */
const configured = (config: AppConfig, name: StaticSettingName): string =>
  name === 'compose_file' ? config.stack.compose_file : config.proxy.plugins_local_dir;

/** The path in effect and where it comes from: settings.yaml, else the env/config value. */
export function settingOf(
  settings: Settings,
  config: AppConfig,
  name: StaticSettingName,
): { path: string | null; source: SettingSource } {
  const fromSettings = settings[name];
  if (fromSettings) return { path: fromSettings, source: 'settings' };
  const fromConfig = configured(config, name);
  if (fromConfig) return { path: fromConfig, source: 'env' };
  return { path: null, source: 'unset' };
}
