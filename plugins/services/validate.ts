/**
 * Service rules shared by the API and hand edits (API.md §4.3, §3.3): protocol/type combinations,
 * the Traefik `<protocol><Type>Service` definition, references to other services and cycles.
 */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import type { TraefikSchema } from '../../model/traefik-schema.ts';
import type { ConfigOutcome } from '../middlewares/index.ts';

/** What a reference target looks like; `unread` is a file on disk not yet taken in (hand edits). */
export type Target = { protocol: string; refs: string[] } | 'unread' | undefined;

export interface ServiceContext {
  schema: TraefikSchema;
  allowUnknown: boolean;
  /** A manual/template service by id. */
  lookup(id: string): Target;
}

/** One reference to another service inside `config`, with its JSON Pointer. */
export interface ServiceReference {
  path: string;
  name: string;
}

const STREAM_TYPES = new Set(['loadBalancer', 'weighted']);
const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** Name of the Traefik JSON Schema definition for a protocol and type, e.g. `httpWeightedService`. */
export const definitionOf = (protocol: string, type: string): string => `${protocol}${capitalise(type)}Service`;

/** References held by a config: weighted/mirroring/failover members (strings only). */
export function serviceReferences(type: string, config: Record<string, unknown>): ServiceReference[] {
  const refs: ServiceReference[] = [];
  const single = (key: string) => {
    if (typeof config[key] === 'string') refs.push({ path: `/config/${key}`, name: config[key] as string });
  };
  const list = (key: string) => {
    const items = config[key];
    if (!Array.isArray(items)) return;
    items.forEach((item, i) => {
      const name = (item as Record<string, unknown> | null)?.name;
      if (typeof name === 'string') refs.push({ path: `/config/${key}/${i}/name`, name });
    });
  };
  if (type === 'weighted') list('services');
  if (type === 'mirroring') {
    single('service');
    list('mirrors');
  }
  if (type === 'failover') {
    single('service');
    single('fallback');
  }
  return refs;
}

/** Validates a service as `id` would hold it. */
export function checkServiceConfig(
  id: string,
  protocol: string,
  type: string,
  config: Record<string, unknown>,
  ctx: ServiceContext,
): ConfigOutcome {
  if (protocol !== 'http' && !STREAM_TYPES.has(type)) {
    return {
      errors: [{ path: '/type', message: `a ${protocol} service must be loadBalancer or weighted` }],
      tolerated: [],
    };
  }
  const traefik = ctx.schema.check(definitionOf(protocol, type), config, '/config', `a ${protocol} ${type} service`);
  const errors: ErrorDetail[] = [...traefik.errors, ...(ctx.allowUnknown ? [] : traefik.unknown)];
  for (const ref of serviceReferences(type, config)) {
    if (ref.name.includes('@')) continue; // name@provider: another provider's object, not ours to check
    const problem = referenceProblem(id, protocol, ref.name, ctx);
    if (problem) errors.push({ path: ref.path, message: problem });
  }
  return { errors, tolerated: ctx.allowUnknown ? traefik.unknown : [] };
}

function referenceProblem(id: string, protocol: string, name: string, ctx: ServiceContext): string | null {
  if (name === id) return `a service cannot reference itself (${id})`;
  const target = ctx.lookup(name);
  if (target === 'unread') return null;
  if (!target) return `service ${name} is not a manual or template service (use name@provider for other services)`;
  if (target.protocol !== protocol)
    return `service ${name} is a ${target.protocol} service; a ${protocol} service can only reference ${protocol} services`;
  const cycle = cycleThrough(id, name, ctx);
  return cycle ? `creates a cycle: ${[id, ...cycle].join(' → ')}` : null;
}

/** The path from `start` back to `id` through service references, if there is one. */
function cycleThrough(id: string, start: string, ctx: ServiceContext): string[] | null {
  const visited = new Set<string>();
  const walk = (node: string): string[] | null => {
    if (node === id) return [id];
    if (visited.has(node)) return null;
    visited.add(node);
    const target = ctx.lookup(node);
    if (!target || target === 'unread') return null;
    for (const next of target.refs) {
      if (next.includes('@')) continue;
      const rest = walk(next);
      if (rest) return [node, ...rest];
    }
    return null;
  };
  return walk(start);
}
