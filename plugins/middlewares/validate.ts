/**
 * Middleware rules shared by the API and hand edits (API.md §4.2, §3.3): the Traefik definition
 * of the type, plugin and chain rules; and the non-blocking warnings shown on reads.
 */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import type { DeclaredPlugins } from '../../model/static-config.ts';
import type { TraefikSchema } from '../../model/traefik-schema.ts';
import { checkGatedKeys, nodeAt } from '../../model/traefik-versions.ts';
import { buildProblems } from './build-rules.ts';
import { pointerToken } from '../../core/json-pointer.ts';

export const PLUGIN_KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
export const MAX_CHAIN_MEMBERS = 50;

/** What validation needs to know about the other middlewares. */
export interface MiddlewareContext {
  schema: TraefikSchema;
  allowUnknown: boolean;
  /** Whether a middleware id exists (or, during the startup scan, has a file). */
  exists(id: string): boolean;
  /** Chain members of a stored middleware (empty when it is not a chain or unknown). */
  membersOf(id: string): string[];
}

export interface ConfigOutcome {
  errors: ErrorDetail[];
  /** Unknown Traefik fields tolerated because `validation.allow_unknown_traefik_fields` is on. */
  tolerated: ErrorDetail[];
}

/** Chain member entries as stored (non-strings are left to the schema check). */
export function chainMembers(type: string, config: Record<string, unknown>): string[] {
  if (type !== 'chain' || !Array.isArray(config.middlewares)) return [];
  return config.middlewares.filter((m): m is string => typeof m === 'string');
}

/** Validates `config` for `type` as the middleware `id` would hold it. */
export function checkMiddlewareConfig(
  id: string,
  type: string,
  config: Record<string, unknown>,
  ctx: MiddlewareContext,
): ConfigOutcome {
  const errors: ErrorDetail[] = [];
  if (type === 'plugin') {
    const keys = Object.keys(config);
    if (keys.length !== 1)
      errors.push({ path: '/config', message: `must have exactly one key, the plugin key (has ${keys.length})` });
    else if (!PLUGIN_KEY.test(keys[0]))
      errors.push({
        path: `/config/${pointerToken(keys[0])}`,
        message: `plugin key must match ${PLUGIN_KEY.source}`,
      });
  }
  const traefik = ctx.schema.check(`${type}Middleware`, config, '/config', `the ${type} middleware`);
  // G14: keys of newer Traefik versions are known; keys no version has are refused
  const gated = checkGatedKeys(nodeAt(['http', 'middlewares', '*', type]), config, traefik.unknown);
  errors.push(...traefik.errors, ...gated.errors);
  if (type !== 'plugin') errors.push(...emptyObjects(type, config), ...buildProblems(type, config));
  if (!ctx.allowUnknown) errors.push(...gated.unknown);
  if (type === 'chain') errors.push(...checkChain(id, config, ctx));
  return { errors, tolerated: ctx.allowUnknown ? gated.unknown : [] };
}

/** Middleware types Traefik accepts with no field set (`compress: {}`); its `allowEmpty` structs. */
const EMPTY_TYPES = new Set(['compress', 'contentType']);
/** Nested objects Traefik accepts empty (`ipStrategy: {}` means the remote address). */
const EMPTY_FIELDS = new Set(['ipStrategy']);

/**
 * Empty objects Traefik cannot decode. Its HTTP provider refuses the whole document for one (Traefik
 * 3.7.15: `cannot decode configuration data: headers cannot be a standalone element (type
 * *dynamic.Headers)`, the same for `grpcWeb: {}`, `sourceCriterion: {}`, `tls: {}`,
 * `customRequestHeaders: {}`…) and keeps its previous one, so every later change would be lost.
 */
function emptyObjects(type: string, config: Record<string, unknown>): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  if (Object.keys(config).length === 0 && !EMPTY_TYPES.has(type))
    errors.push({
      path: '/config',
      message: `must set at least one field: Traefik refuses an empty ${type} middleware ("${type} cannot be a standalone element")`,
    });
  const walk = (node: unknown, at: string, key: string): void => {
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${at}/${i}`, key));
    else if (typeof node === 'object' && node !== null) {
      const entries = Object.entries(node);
      if (entries.length === 0 && !EMPTY_FIELDS.has(key))
        errors.push({
          path: at,
          message: `must not be empty: Traefik refuses an empty ${key} ("${key} cannot be a standalone element"); leave it out instead`,
        });
      for (const [k, v] of entries) walk(v, `${at}/${pointerToken(k)}`, k);
    }
  };
  for (const [k, v] of Object.entries(config)) walk(v, `/config/${pointerToken(k)}`, k);
  return errors;
}

function checkChain(id: string, config: Record<string, unknown>, ctx: MiddlewareContext): ErrorDetail[] {
  if (!Array.isArray(config.middlewares)) return [];
  const errors: ErrorDetail[] = [];
  if (config.middlewares.length > MAX_CHAIN_MEMBERS)
    errors.push({ path: '/config/middlewares', message: `must have at most ${MAX_CHAIN_MEMBERS} entries` });
  config.middlewares.forEach((member, i) => {
    if (typeof member !== 'string' || member.includes('@')) return; // name@provider: another provider's object, not ours to check
    const at = `/config/middlewares/${i}`;
    if (member === id) errors.push({ path: at, message: `a chain cannot list itself (${id})` });
    else if (!ctx.exists(member)) errors.push({ path: at, message: `middleware ${member} does not exist` });
    else {
      const cycle = cycleThrough(id, member, ctx);
      if (cycle) errors.push({ path: at, message: `creates a cycle: ${[id, ...cycle].join(' → ')}` });
    }
  });
  return errors;
}

/** The path from `start` back to `id` through chain members, if there is one. */
function cycleThrough(id: string, start: string, ctx: MiddlewareContext): string[] | null {
  const visited = new Set<string>();
  const walk = (node: string): string[] | null => {
    if (node === id) return [id];
    if (visited.has(node)) return null;
    visited.add(node);
    for (const next of ctx.membersOf(node)) {
      if (next.includes('@')) continue;
      const rest = walk(next);
      if (rest) return [node, ...rest];
    }
    return null;
  };
  return walk(start);
}

/** Non-blocking findings of a stored middleware (API.md §4.2 `warnings`). */
export function middlewareWarnings(
  type: string,
  config: Record<string, unknown>,
  tolerated: ErrorDetail[],
  plugins: () => DeclaredPlugins,
): string[] {
  const warnings: string[] = [];
  if (type === 'ipWhiteList')
    warnings.push('ipWhiteList is deprecated: Traefik still reads it, but use ipAllowList (same fields)');
  if (type === 'plugin') {
    const key = Object.keys(config)[0];
    const declared = plugins();
    if (!declared.keys) warnings.push(`plugin "${key}" cannot be checked: ${declared.problem}`);
    else if (!declared.keys.has(key))
      warnings.push(
        `plugin "${key}" is not declared under experimental.plugins or experimental.localPlugins of the Traefik static config ${declared.path}; Traefik will not load this middleware`,
      );
  }
  for (const unknown of tolerated)
    warnings.push(
      `${unknown.path.replace(/^\//, '')} ${unknown.message}; accepted because validation.allow_unknown_traefik_fields is on`,
    );
  return warnings;
}
