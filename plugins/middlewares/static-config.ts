/**
 * Reads the plugin keys declared in Traefik's static configuration (`experimental.plugins` and
 * `experimental.localPlugins`), so plugin middlewares can warn about undeclared keys (API.md §4.2).
 */
import { readFileSync, statSync } from 'node:fs';
import { parse } from 'yaml';

export interface DeclaredPlugins {
  /** The static config path in effect, or null when none is set. */
  path: string | null;
  /** Declared plugin keys; null when the file cannot be used (then `problem` says why). */
  keys: Set<string> | null;
  problem: string | null;
}

/** Caches the parsed keys per file path and mtime, so reads cost one stat. */
export class StaticConfigReader {
  private cache: { path: string; mtimeMs: number; size: number; result: DeclaredPlugins } | null = null;

  /** `currentPath` returns the path in effect now (settings.yaml wins over the config). */
  constructor(private readonly currentPath: () => string | null) {}

  declaredPlugins(): DeclaredPlugins {
    const file = this.currentPath();
    if (!file) return { path: null, keys: null, problem: 'no Traefik static config path is set' };
    let stats;
    try {
      stats = statSync(file);
    } catch (err) {
      return { path: file, keys: null, problem: `Traefik static config ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    const cached = this.cache;
    if (cached && cached.path === file && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached.result;
    const result = readKeys(file);
    this.cache = { path: file, mtimeMs: stats.mtimeMs, size: stats.size, result };
    return result;
  }
}

function readKeys(file: string): DeclaredPlugins {
  let value: unknown;
  try {
    value = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { path: file, keys: null, problem: `Traefik static config ${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}` };
  }
  const keys = new Set<string>();
  const experimental = isObject(value) ? value.experimental : undefined;
  if (isObject(experimental)) {
    for (const section of [experimental.plugins, experimental.localPlugins]) {
      if (isObject(section)) for (const key of Object.keys(section)) keys.add(key);
    }
  }
  return { path: file, keys, problem: null };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
