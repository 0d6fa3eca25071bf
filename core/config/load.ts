/** Loads settings: config/default.yaml → CONFIG_FILE → environment (API.md §5), validated once. */
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { ConfigSchema, ENV_FALLBACKS, ENV_MAP, type AppConfig } from './schema.ts';
import { explainSchema } from '../errors/explain.ts';
import { recordEnvOrigins } from './env-origins.ts';
import { parseYamlValue } from '../yaml-parse.ts';

export class ConfigError extends Error {
  readonly exitCode = 78; // EX_CONFIG: sysexits.h, the code API.md §5 asks for
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`invalid setting ${key}: ${message}`);
  }
}

// from core/config/ (sources) or dist/core/config/ (compiled): the first dir up holding package.json
let root = import.meta.dirname;
while (!existsSync(path.join(root, 'package.json')) && path.dirname(root) !== root) root = path.dirname(root);
/** Directory holding package.json; config/default.yaml and templates live under it. */
export const PROJECT_ROOT = root;

type Tree = Record<string, unknown>;

function readYaml(file: string, key: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(key, `cannot read ${file}: ${(err as Error).message}`);
  }
  const value = parseYamlValue(text) ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(key, `${file} is not a YAML mapping`);
  return value as Tree;
}

function deepMerge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Tree, v as Tree)
        : v;
  }
  return out;
}

function setPath(tree: Tree, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = tree;
  for (const p of parts.slice(0, -1)) {
    if (!node[p] || typeof node[p] !== 'object') node[p] = {};
    node = node[p] as Tree;
  }
  node[parts.at(-1)!] = value;
}

function getPath(tree: Tree, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((n, p) => (n && typeof n === 'object' ? (n as Tree)[p] : undefined), tree);
}

/** Turns an env string into the type the default has (number, bool, list). */
function coerce(raw: string, like: unknown, key: string): unknown {
  if (key === 'server.trust_proxy') {
    // boolean, hop count or CIDR list (API.md §5)
    if (/^(true|false)$/i.test(raw)) return raw.toLowerCase() === 'true';
    if (/^[0-9]+$/.test(raw)) return Number(raw);
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }
  if (Array.isArray(like))
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (typeof like === 'number') {
    if (!/^-?[0-9]+$/.test(raw.trim())) throw new ConfigError(key, `expected an integer, got "${raw}"`);
    return Number(raw);
  }
  if (typeof like === 'boolean') {
    if (/^(true|1)$/i.test(raw)) return true;
    if (/^(false|0)$/i.test(raw)) return false;
    throw new ConfigError(key, `expected true or false, got "${raw}"`);
  }
  return raw;
}

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  if (env[name] !== undefined) return env[name];
  const file = env[`${name}_FILE`];
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(ENV_MAP[name] ?? name, `cannot read ${name}_FILE ${file}: ${(err as Error).message}`);
    }
  }
  return undefined;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra values merged last (tests, embedding). */
  overrides?: Record<string, unknown>;
  defaultsFile?: string;
}

/** Reads and validates the configuration; throws ConfigError naming the first bad key. */
export function loadConfig(options: LoadOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const defaultsFile = options.defaultsFile ?? path.join(PROJECT_ROOT, 'config', 'default.yaml');
  const defaults = readYaml(defaultsFile, 'CONFIG_FILE');
  let tree = defaults;
  const localFile = env.CONFIG_FILE ?? path.join(PROJECT_ROOT, 'config', 'local.yaml');
  if (env.CONFIG_FILE !== undefined || existsSync(localFile))
    tree = deepMerge(tree, readYaml(localFile, 'CONFIG_FILE'));
  // which variable set which key: seeding variables that a data file overrides are warned about
  const origins: Record<string, string> = {};
  for (const [name, key] of Object.entries(ENV_MAP)) {
    const primary = ENV_FALLBACKS[name];
    if (primary && envValue(env, primary) !== undefined) continue;
    const raw = envValue(env, name);
    if (raw === undefined) continue;
    setPath(tree, key, coerce(raw, getPath(defaults, key), key));
    origins[key] = name;
  }
  if (options.overrides) {
    tree = deepMerge(tree, options.overrides);
    for (const key of Object.keys(origins)) if (getPath(options.overrides, key) !== undefined) delete origins[key];
  }
  const config = validateConfig(tree);
  recordEnvOrigins(config, origins);
  return config;
}

/** Validates a full settings tree, naming the first failing key. */
export function validateConfig(tree: unknown): AppConfig {
  const error = Value.Errors(ConfigSchema, tree).First();
  if (error) {
    // explained like a request body (core/errors/explain.ts): allowed values, what was received
    const explained = explainSchema(ConfigSchema, tree)[0] ?? { path: error.path, message: error.message };
    const key = explained.path.replace(/^\//, '').replaceAll('/', '.') || '(root)';
    throw new ConfigError(key, explained.message);
  }
  return Value.Clean(ConfigSchema, structuredClone(tree)) as AppConfig;
}
