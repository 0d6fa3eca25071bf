/**
 * Service rules shared by the API and hand edits (API.md §4.3, §3.3): protocol/type combinations,
 * the Traefik `<protocol><Type>Service` definition, references to other services and cycles.
 */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import type { TraefikSchema } from '../../model/traefik-schema.ts';
import { checkGatedKeys, nodeAt } from '../../model/traefik-versions.ts';
import { goUrlError } from './go-url.ts';
import type { ConfigOutcome } from '../middlewares/index.ts';
import { pointerToken } from '../../core/json-pointer.ts';

/**
 * What a reference target looks like; `unread` is a file on disk not yet taken in (hand edits).
 * `health`: whether Traefik can follow its health (see followsHealth).
 */
export type Target = { protocol: string; refs: string[]; health: boolean } | 'unread' | undefined;

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

/** A reference held by a config, with how to rename it in place (an import maps ids). */
export interface ServiceReferenceSlot extends ServiceReference {
  set(name: string): void;
}

/** References held by a config: weighted/mirroring/failover members (strings only), renamable in place. */
export function serviceReferenceSlots(type: string, config: Record<string, unknown>): ServiceReferenceSlot[] {
  const refs: ServiceReferenceSlot[] = [];
  const single = (key: string) => {
    const name = config[key];
    if (typeof name === 'string') refs.push({ path: `/config/${key}`, name, set: (v) => (config[key] = v) });
  };
  const list = (key: string) => {
    const items = config[key];
    if (!Array.isArray(items)) return;
    items.forEach((item, i) => {
      const name = (item as Record<string, unknown> | null)?.name;
      if (typeof name === 'string')
        refs.push({ path: `/config/${key}/${i}/name`, name, set: (v) => ((item as Record<string, unknown>).name = v) });
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

/** References held by a config: weighted/mirroring/failover members (strings only). */
export function serviceReferences(type: string, config: Record<string, unknown>): ServiceReference[] {
  return serviceReferenceSlots(type, config).map(({ path, name }) => ({ path, name }));
}

const hasHealthCheck = (config: Record<string, unknown>): boolean =>
  typeof config.healthCheck === 'object' && config.healthCheck !== null && !Array.isArray(config.healthCheck);

/**
 * Whether Traefik can follow an HTTP service's health (its `RegisterStatusUpdater` succeeds): a
 * `healthCheck` of its own, and for mirroring its main service's too. Unknown targets count as yes
 * (their reference is checked on its own).
 */
export function followsHealth(type: string, config: Record<string, unknown>, lookup: (id: string) => Target): boolean {
  if (!hasHealthCheck(config)) return false;
  if (type !== 'mirroring' || typeof config.service !== 'string' || config.service.includes('@')) return true;
  const target = lookup(config.service);
  return target === undefined || target === 'unread' || target.health;
}

/**
 * References whose health Traefik must follow to build this HTTP service, else it disables the
 * service and every router on it ("cannot register <child> as updater for <service>: healthCheck
 * not enabled in config for this … service"): a failover's main service always and its fallback
 * when the failover has a healthCheck; every member of a weighted service that has one.
 */
export function healthReferences(type: string, config: Record<string, unknown>): ServiceReference[] {
  const refs = serviceReferences(type, config);
  if (type === 'failover')
    return refs.filter(
      (r) => r.path === '/config/service' || (hasHealthCheck(config) && r.path === '/config/fallback'),
    );
  if (type === 'weighted' && hasHealthCheck(config)) return refs;
  return [];
}

/**
 * Objects Traefik decodes when empty (its `allowEmpty` fields), by `<protocol> <type>` and JSON
 * Pointer under `config`; measured with Traefik 3.7.15.
 */
const EMPTY_ALLOWED = new Set([
  'http loadBalancer /sticky',
  'http loadBalancer /sticky/cookie',
  'http weighted /sticky/cookie',
  'http weighted /healthCheck',
  'http mirroring /healthCheck',
  'http failover /healthCheck',
  'tcp loadBalancer /proxyProtocol',
]);

/**
 * Empty objects Traefik cannot decode: its HTTP provider then refuses the whole document and keeps
 * the previous one (Traefik 3.7.15: `cannot decode configuration data: healthCheck cannot be a
 * standalone element (type *dynamic.ServerHealthCheck)`, the same for a load balancer's
 * `responseForwarding: {}`, a health check's `headers: {}`, a weighted service's `sticky: {}`).
 */
function emptyObjects(protocol: string, type: string, config: Record<string, unknown>): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const walk = (node: unknown, pointer: string, key: string): void => {
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${pointer}/${i}`, key));
    else if (typeof node === 'object' && node !== null) {
      const entries = Object.entries(node);
      if (entries.length === 0 && !EMPTY_ALLOWED.has(`${protocol} ${type} ${pointer}`))
        errors.push({
          path: `/config${pointer}`,
          message: `must not be empty: Traefik refuses an empty ${key} ("${key} cannot be a standalone element") and with it the whole configuration; leave it out instead`,
        });
      for (const [k, v] of entries) walk(v, `${pointer}/${pointerToken(k)}`, k);
    }
  };
  walk(config, '', type);
  return errors;
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
  // an unknown key is reported as such, not also as empty
  const unknown = (path: string) => traefik.unknown.some((u) => path === u.path || path.startsWith(`${u.path}/`));
  // G14: keys of newer Traefik versions are known; keys no version has are refused
  const gated = checkGatedKeys(nodeAt([protocol, 'services', '*', type]), config, traefik.unknown);
  const errors: ErrorDetail[] = [
    ...traefik.errors,
    ...gated.errors,
    ...emptyObjects(protocol, type, config).filter((e) => !unknown(e.path)),
    ...(ctx.allowUnknown ? [] : gated.unknown),
    ...serverUrls(protocol, type, config),
  ];
  for (const ref of serviceReferences(type, config)) {
    if (ref.name.includes('@')) continue; // name@provider: another provider's object, not ours to check
    const problem = referenceProblem(id, protocol, ref.name, ctx);
    if (problem) errors.push({ path: ref.path, message: problem });
  }
  if (protocol === 'http') {
    for (const ref of healthReferences(type, config)) {
      const target = ref.name.includes('@') ? undefined : ctx.lookup(ref.name);
      if (typeof target === 'object' && target.protocol === 'http' && !target.health)
        errors.push({ path: ref.path, message: noHealthMessage(ref.name, type) });
    }
  }
  return { errors, tolerated: ctx.allowUnknown ? gated.unknown : [] };
}

/**
 * Server URLs Go's url.Parse refuses: Traefik 3.7.15 then disables the service and its routers
 * (`error parsing server URL http://127.0.0.1:abc: parse "…": invalid port ":abc" after host`).
 */
function serverUrls(protocol: string, type: string, config: Record<string, unknown>): ErrorDetail[] {
  if (protocol !== 'http' || type !== 'loadBalancer' || !Array.isArray(config.servers)) return [];
  return config.servers.flatMap((server: unknown, i) => {
    const url = (server as Record<string, unknown> | null)?.url;
    const error = typeof url === 'string' ? goUrlError(url) : null;
    return error
      ? [
          {
            path: `/config/servers/${i}/url`,
            message: `is not a URL Traefik can parse (Traefik: "error parsing server URL: ${error}")`,
          },
        ]
      : [];
  });
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

/** Why Traefik would refuse a reference whose health it cannot follow. */
export function noHealthMessage(name: string, type: string): string {
  const what =
    type === 'failover'
      ? "a failover's main service, and its fallback's when the failover has a healthCheck"
      : 'every member of a weighted service with a healthCheck';
  return `service ${name} has no healthCheck (for a mirroring service: its own and its main service's), but Traefik follows the health of ${what} and disables this service and its routers otherwise`;
}
