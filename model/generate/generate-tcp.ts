/**
 * G9: the TCP router `<id>_tcp` of a resource, with servers derived from its HTTP service when
 * no TCP service is assigned.
 */
import type { JsonObject, Resource, ResourceConfig } from '../types.ts';
import { cloneJson, findSection, putNew, resolveService, type Emitter } from './generate-support.ts';
import { isObject } from '../../core/ids.ts';

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'h2c:': '80', 'https:': '443' };
/** The first value of a HostSNI matcher, the one Traefik checks against a router without TLS. */
const FIRST_HOST_SNI = /HostSNI\(\s*`([^`]*)`/;

/** Emits `tcp.routers.<id>_tcp` (and its derived service) next to the patched HTTP router. */
export function emitTcpRouter(
  emitter: Emitter,
  resource: Resource,
  config: ResourceConfig,
  httpRouter: JsonObject,
  warnings: string[],
): void {
  const name = `${resource.id}_tcp`;
  // derived servers come from service bodies, which the memo does not key on
  if (emitter.recording) emitter.recording.cacheable = false;
  const httpTls = isObject(httpRouter.tls) ? httpRouter.tls : null;
  // Traefik refuses a HostSNI naming a host on a router without TLS ("has HostSNI matcher, but no
  // TLS on router"): without TLS there is no SNI to read, so the only default is HostSNI(`*`)
  const rule =
    config.tcp.sni_rule ?? (!httpTls ? 'HostSNI(`*`)' : resource.host ? `HostSNI(\`${resource.host}\`)` : null);
  if (rule === null) {
    warnings.push('TCP router omitted: no sni_rule and the resource has no host');
    return;
  }
  const first = FIRST_HOST_SNI.exec(rule)?.[1];
  if (!httpTls && first !== undefined && first !== '*') {
    warnings.push(
      `sni_rule ${rule} names a host but the router has no TLS: Traefik disables the TCP router (only HostSNI(\`*\`) works without TLS)`,
    );
  }
  let service: string | null = null;
  if (config.tcp.service_id !== null) {
    service = resolveService(emitter, config.tcp.service_id, 'tcp', `/api/resources/${resource.id}`, warnings);
  }
  if (service === null) {
    const servers = deriveServers(emitter, httpRouter.service);
    if (servers.length === 0) {
      warnings.push('TCP router omitted: no server address can be derived from the HTTP service');
      return;
    }
    if (!putNew(emitter, 'service', ['tcp', 'services'], name, { loadBalancer: { servers } })) return;
    service = name;
  }
  const router: JsonObject = { entryPoints: [...config.tcp.entrypoints], rule, service };
  if (httpTls) {
    const tls: JsonObject = {};
    for (const key of ['certResolver', 'domains', 'options']) {
      if (httpTls[key] !== undefined) tls[key] = cloneJson(httpTls[key]);
    }
    router.tls = tls;
  }
  putNew(emitter, 'router', ['tcp', 'routers'], name, router);
}

/** `host:port` of every server URL of the effective HTTP load balancer (port from the scheme if absent). */
function deriveServers(emitter: Emitter, reference: unknown): { address: string }[] {
  const balancer = loadBalancerOf(emitter, reference);
  const servers = isObject(balancer) && Array.isArray(balancer.servers) ? balancer.servers : [];
  const out: { address: string }[] = [];
  for (const server of servers) {
    if (!isObject(server) || typeof server.url !== 'string') continue;
    let url: URL;
    try {
      url = new URL(server.url);
    } catch {
      continue;
    }
    const port = url.port || DEFAULT_PORTS[url.protocol];
    if (url.hostname && port) out.push({ address: `${url.hostname}:${port}` });
  }
  return out;
}

/** The loadBalancer body behind a router's service reference, wherever it is defined. */
function loadBalancerOf(emitter: Emitter, reference: unknown): unknown {
  if (typeof reference !== 'string') return undefined;
  const ours = emitter.services.get(reference);
  if (ours) return ours.type === 'loadBalancer' && (ours.protocol ?? 'http') === 'http' ? ours.config : undefined;
  const discovered = emitter.discoveredByUpstream.get(reference);
  if (discovered) return discovered.type === 'loadBalancer' ? discovered.config : undefined;
  // Pangolin mode: a plain upstream key (or `key@http` as written by a hand edit)
  const upstream = findSection(emitter.config, 'http', 'services');
  const key = reference.endsWith('@http') ? reference.slice(0, -5) : reference;
  const definition = upstream && Object.hasOwn(upstream, key) ? upstream[key] : undefined;
  return isObject(definition) ? definition.loadBalancer : undefined;
}
