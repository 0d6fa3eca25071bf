/** The default plugin key of a module (API.md §4.6 install `key`). */
import { KEY_PATTERN } from './schemas.ts';

const KEY = new RegExp(KEY_PATTERN);

/**
 * Last module path segment, cut at `@`, minus a `.git` then a `-plugin` suffix, lower-cased;
 * null when that is not a valid key (the caller then asks for an explicit one).
 */
export function defaultKey(moduleName: string): string | null {
  const last = moduleName.split('/').pop() ?? '';
  const key = last
    .split('@')[0]
    .replace(/\.git$/i, '')
    .replace(/-plugin$/i, '')
    .toLowerCase();
  return KEY.test(key) ? key : null;
}
