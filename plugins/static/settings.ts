/**
 * The files of the static configuration group set through the API (docs/API.md "Static settings"):
 * settings.yaml `compose_file` and `plugins_local_dir` win over `stack.compose_file`
 * (STACK_COMPOSE_FILE) and `proxy.plugins_local_dir` (PROXY_PLUGINS_LOCAL_DIR), as the static config
 * path of §4.6 does (the rule: model/static-settings.ts). Every reader resolves the path in effect at
 * each use, so a change applies at once.
 */
import { statSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { StoreDocument } from '../../core/store/types.ts';
import { canWrite, writableOrCreatable } from '../../model/path-access.ts';
import { settingOf, type SettingSource, type StaticSettingName } from '../../model/static-settings.ts';
import type { Settings } from '../../core/settings.ts';
import type { AppConfig } from '../../core/config/schema.ts';
import { staticErrors } from './errors.ts';

export interface SettingView {
  path: string | null;
  source: SettingSource;
  exists: boolean;
  writable: boolean;
}

export type StaticSettingsView = Record<StaticSettingName, SettingView>;
/** PUT body: a string sets the path, null clears settings.yaml's value (the env/config one applies again). */
export type StaticSettingsChange = Partial<Record<StaticSettingName, string | null>>;

const MAX_PATH = 4096;
const NAMES: StaticSettingName[] = ['compose_file', 'plugins_local_dir'];

const statOf = (target: string): Stats | null => {
  try {
    return statSync(target);
  } catch {
    return null;
  }
};

/** `exists`: a file (compose) or a directory (plugins-local); `writable`: it, or when missing its parent, may be written. */
function describe(name: StaticSettingName, current: { path: string | null; source: SettingSource }): SettingView {
  if (!current.path) return { ...current, exists: false, writable: false };
  const stats = statOf(current.path);
  const exists = stats !== null && (name === 'compose_file' ? stats.isFile() : stats.isDirectory());
  return { ...current, exists, writable: writableOrCreatable(current.path, exists) };
}

/** The GET answer. */
export function describeSettings(settings: Settings, config: AppConfig): StaticSettingsView {
  return {
    compose_file: describe('compose_file', settingOf(settings, config, 'compose_file')),
    plugins_local_dir: describe('plugins_local_dir', settingOf(settings, config, 'plugins_local_dir')),
  };
}

/** Checks a new path (422 `validation_failed` naming `/<name>`, as configpath's `/path`); returns it normalised. */
export function checkSettingPath(name: StaticSettingName, raw: string): string {
  const fail = (message: string) => staticErrors.invalid(`/${name}`, message);
  if (raw.length > MAX_PATH) throw fail(`must be at most ${MAX_PATH} characters`);
  if (!path.isAbsolute(raw)) throw fail('must be an absolute path');
  if (raw.split(/[\\/]/).includes('..')) throw fail('must not contain a ".." segment');
  if (name === 'compose_file' && !/\.ya?ml$/i.test(raw)) throw fail('must end in .yml or .yaml');
  // a trailing `/` would make the parent the directory itself
  const normal = path.normalize(raw).replace(/(.)[\\/]+$/, '$1');
  const parentPath = path.dirname(normal);
  const parent = statOf(parentPath);
  if (!parent) throw fail(`parent directory ${parentPath} does not exist`);
  if (!parent.isDirectory()) throw fail(`parent ${parentPath} is not a directory`);
  const stats = statOf(normal);
  if (name === 'compose_file') {
    if (stats && !stats.isFile()) throw fail(`${normal} exists and is not a file`);
  } else if (stats) {
    if (!stats.isDirectory()) throw fail(`${normal} exists and is not a directory`);
  } else if (!canWrite(parentPath)) {
    // vendoring creates the directory on first use: its parent must let it
    throw fail(`${normal} does not exist and cannot be created: ${parentPath} is not writable`);
  }
  return normal;
}

/**
 * Validates every field of a PUT before anything is written, then stores them in one settings.yaml
 * update (a string sets the value, null removes it). Fields left out keep their value.
 */
export async function updateSettings(
  document: StoreDocument<Settings>,
  config: AppConfig,
  change: StaticSettingsChange,
): Promise<StaticSettingsView> {
  const next: StaticSettingsChange = {};
  for (const name of NAMES) {
    const value = change[name];
    if (value === undefined) continue;
    next[name] = value === null ? null : checkSettingPath(name, value);
  }
  if (Object.keys(next).length > 0) {
    await document.update((current) => {
      const updated: Settings = { ...current };
      for (const name of NAMES) {
        if (!(name in next)) continue;
        const value = next[name];
        if (value === null) delete updated[name];
        else updated[name] = value;
      }
      return updated;
    });
  }
  return describeSettings(document.get(), config);
}
