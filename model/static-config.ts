/**
 * Reads the plugin keys declared in Traefik's static configuration (`experimental.plugins` and
 * `experimental.localPlugins`), so plugin middlewares can warn about undeclared keys (API.md §4.2)
 * and the mTLS group can find the mtlswhitelist plugin by module name or key (§4.8).
 */
import { readFileSync, statSync } from 'node:fs';
import { YAMLError } from 'yaml';
import { isObject } from '../core/ids.ts';
import { parseYamlValue } from '../core/yaml-parse.ts';

export interface DeclaredPlugins {
  /** The static config path in effect, or null when none is set. */
  path: string | null;
  /** Declared plugin keys; null when the file cannot be used (then `problem` says why). */
  keys: Set<string> | null;
  /** The same declarations with their module names and versions; null when `keys` is. */
  entries: DeclaredPlugin[] | null;
  problem: string | null;
  /**
   * Why the file cannot be used, for answers that point at it (Plugins group, §4.6): `missing` when
   * it does not exist, `unreadable` for other read errors, `invalid` for YAML errors (with the line).
   */
  failure?: { kind: 'missing' | 'unreadable' | 'invalid'; line: number | null; message: string } | null;
}

/** One entry of `experimental.plugins` (`local: false`) or `experimental.localPlugins` (`local: true`). */
export interface DeclaredPlugin {
  key: string;
  module_name: string | null;
  version: string | null;
  local: boolean;
}

/** Caches the parsed keys per file path and mtime, so reads cost one stat. */
export class StaticConfigReader {
  private cache: { path: string; mtimeMs: number; size: number; result: DeclaredPlugins } | null = null;

  /** `currentPath` returns the path in effect now (settings.yaml wins over the config). */
  constructor(private readonly currentPath: () => string | null) {}

  declaredPlugins(): DeclaredPlugins {
    const file = this.currentPath();
    if (!file) return { path: null, keys: null, entries: null, problem: 'no Traefik static config path is set' };
    let stats;
    try {
      stats = statSync(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      return {
        path: file,
        keys: null,
        entries: null,
        problem: `Traefik static config ${file} cannot be read (${code})`,
        failure: {
          kind: code === 'ENOENT' ? 'missing' : 'unreadable',
          line: null,
          message: `cannot be read (${code})`,
        },
      };
    }
    const cached = this.cache;
    if (cached && cached.path === file && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size)
      return cached.result;
    const result = readKeys(file);
    this.cache = { path: file, mtimeMs: stats.mtimeMs, size: stats.size, result };
    return result;
  }
}

function readKeys(file: string): DeclaredPlugins {
  let value: unknown;
  try {
    value = parseYamlValue(readFileSync(file, 'utf8')); // nesting-limited: the file is hand-edited
  } catch (err) {
    const message = (err as Error).message.split('\n')[0];
    const line = (err as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line ?? null;
    const kind = err instanceof YAMLError ? 'invalid' : 'unreadable';
    return {
      path: file,
      keys: null,
      entries: null,
      problem: `Traefik static config ${file} is not valid YAML: ${message}`,
      failure: { kind, line, message },
    };
  }
  const keys = new Set<string>();
  const entries: DeclaredPlugin[] = [];
  const experimental = isObject(value) ? value.experimental : undefined;
  if (isObject(experimental)) {
    for (const [section, local] of [
      [experimental.plugins, false],
      [experimental.localPlugins, true],
    ] as const) {
      if (!isObject(section)) continue;
      for (const [key, entry] of Object.entries(section)) {
        keys.add(key);
        entries.push({
          key,
          module_name: stringField(entry, 'moduleName'),
          version: stringField(entry, 'version'),
          local,
        });
      }
    }
  }
  return { path: file, keys, entries, problem: null, failure: null };
}

const stringField = (entry: unknown, field: string): string | null => {
  const v = isObject(entry) ? entry[field] : undefined;
  return typeof v === 'string' ? v : null;
};
