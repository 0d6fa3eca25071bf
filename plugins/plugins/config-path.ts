/**
 * The Traefik static config path (API.md §4.6 configpath): settings.yaml `proxy_static_config_path`
 * wins over `proxy.static_config_path` (PROXY_STATIC_CONFIG); PUT validates and persists it.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { StoreDocument } from '../../core/store/types.ts';
import { writableOrCreatable } from '../../model/path-access.ts';
import type { Settings } from '../../core/settings.ts';
import { pluginErrors } from './errors.ts';

export interface ConfigPathView {
  path: string | null;
  source: 'settings' | 'env' | 'unset';
  exists: boolean;
  writable: boolean;
}

const MAX_PATH = 4096;

/** Where the path in effect comes from. */
export function configPathOf(
  settings: StoreDocument<Settings>,
  configured: string,
): { path: string | null; source: ConfigPathView['source'] } {
  const fromSettings = settings.get().proxy_static_config_path;
  if (fromSettings) return { path: fromSettings, source: 'settings' };
  if (configured) return { path: configured, source: 'env' };
  return { path: null, source: 'unset' };
}

/** The GET answer: whether the file exists and could be written (or, when missing, created in its dir). */
export function describePath(current: { path: string | null; source: ConfigPathView['source'] }): ConfigPathView {
  if (!current.path) return { ...current, exists: false, writable: false };
  let exists: boolean;
  try {
    exists = statSync(current.path).isFile();
  } catch {
    exists = false;
  }
  return { ...current, exists, writable: writableOrCreatable(current.path, exists) };
}

/** Checks a new path (422 `validation_failed` naming `/path`); returns it normalised. */
export function checkNewPath(raw: string): string {
  const fail = (message: string) => pluginErrors.invalid('/path', message);
  if (raw.length > MAX_PATH) throw fail(`must be at most ${MAX_PATH} characters`);
  if (!path.isAbsolute(raw)) throw fail('must be an absolute path');
  if (raw.split(/[\\/]/).includes('..')) throw fail('must not contain a ".." segment');
  if (!/\.ya?ml$/i.test(raw)) throw fail('must end in .yml or .yaml');
  const normal = path.normalize(raw);
  let parent;
  try {
    parent = statSync(path.dirname(normal));
  } catch {
    throw fail(`parent directory ${path.dirname(normal)} does not exist`);
  }
  if (!parent.isDirectory()) throw fail(`parent ${path.dirname(normal)} is not a directory`);
  return normal;
}
