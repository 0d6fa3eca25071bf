/**
 * Discovered services (API.md §4.3): upstream services of either source, normalised, then given
 * stable ids. Pure functions: no I/O, the caller stores the result in the upstream state.
 */
import type { JsonObject } from './types.ts';
import { allocateId, splitKey } from './upstream-routers.ts';
import { isObject } from '../core/ids.ts';
import { slugify } from './ids.ts';
import type { DiscoveredService } from './upstream-state.ts';

export type ServiceProtocol = 'http' | 'tcp' | 'udp';

/** One upstream service, normalised from either source. */
export interface UpstreamService {
  /** full key `name@provider` */
  key: string;
  name: string;
  provider: string;
  protocol: ServiceProtocol;
  /** the Traefik type key, e.g. `loadBalancer` */
  type: string;
  /** body under the type key */
  config: JsonObject;
}

const PROTOCOLS: ServiceProtocol[] = ['http', 'tcp', 'udp'];
// internal services (api@internal, noop@internal…) have none of these and are left out
const SERVICE_TYPES = ['loadBalancer', 'weighted', 'mirroring', 'failover', 'highestRandomWeight'];

function serviceOf(name: string, provider: string, protocol: ServiceProtocol, value: JsonObject): UpstreamService[] {
  const type = SERVICE_TYPES.find((candidate) => isObject(value[candidate]));
  return type
    ? [{ key: `${name}@${provider}`, name, provider, protocol, type, config: value[type] as JsonObject }]
    : [];
}

/** Services of a Pangolin body (`http|tcp|udp.services`), all `@http`. */
export function servicesFromPangolin(body: unknown): UpstreamService[] {
  if (!isObject(body)) return [];
  return PROTOCOLS.flatMap((protocol) => {
    const section = body[protocol];
    const services = isObject(section) ? section.services : undefined;
    if (!isObject(services)) return [];
    return Object.entries(services).flatMap(([name, value]) =>
      isObject(value) ? serviceOf(name, 'http', protocol, value) : [],
    );
  });
}

/** Services of Traefik's `/api/{http,tcp,udp}/services` lists. */
export function servicesFromTraefik(lists: Partial<Record<ServiceProtocol, unknown[]>>): UpstreamService[] {
  return PROTOCOLS.flatMap((protocol) =>
    (lists[protocol] ?? []).filter(isObject).flatMap((item) => {
      if (typeof item.name !== 'string') return [];
      const split = splitKey(item.name);
      const provider = typeof item.provider === 'string' ? item.provider : split.provider;
      return serviceOf(split.provider ? split.name : item.name, provider, protocol, item);
    }),
  );
}

export interface DiscoveredServicesOptions {
  /** objects we emit ourselves (Traefik mode), given the full key; see ownObjectMatcher */
  isOwnService?: (key: string) => boolean;
  /** ids already used by manual/template services */
  takenIds?: Iterable<string>;
}

/** Discovered services with ids (API.md §4.3): provider `internal` and our own objects left out. */
export function discoveredServicesFrom(
  services: UpstreamService[],
  options: DiscoveredServicesOptions = {},
): DiscoveredService[] {
  const taken = new Set(options.takenIds ?? []);
  // a stable order keeps ids stable from one sync to the next
  const ordered = services
    .filter((service) => service.provider !== 'internal' && !options.isOwnService?.(service.key))
    .sort(
      (a, b) =>
        PROTOCOLS.indexOf(a.protocol) - PROTOCOLS.indexOf(b.protocol) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
  const seen = new Set<string>();
  return ordered.flatMap((service) => {
    if (seen.has(`${service.protocol} ${service.key}`)) return [];
    seen.add(`${service.protocol} ${service.key}`);
    const id = allocateId(slugify(service.name, 'service'), service.provider, taken);
    taken.add(id);
    return [
      {
        id,
        name: service.name,
        protocol: service.protocol,
        type: service.type,
        config: service.config,
        provider: service.provider,
        upstream_name: service.key,
        status: 'active' as const,
      },
    ];
  });
}
