/**
 * Readings shaped like a real Traefik 3.7.15 API (measured: see the live-status notes of issue 26),
 * for the pure tests of model/live/. `reported()` turns a router of our document into what Traefik
 * lists for it, filling in what Traefik fills in: every default entry point when none is set, the
 * priority computed from the rule length, TLS options "default", middlewares qualified with their
 * provider, the service as written.
 */
import type { JsonObject } from '../../model/types.ts';
import type { InstanceReading, TraefikObject } from '../../model/live/types.ts';

export const DEFAULT_ENTRY_POINTS = ['web', 'websecure'];

const qualify = (name: string, provider: string) => (name.includes('@') ? name : `${name}@${provider}`);

/** What Traefik's `/api/http/routers` lists for router `key` of a `provider` configuration. */
export function reported(key: string, router: JsonObject, provider = 'http', extra: TraefikObject = {}): TraefikObject {
  const rule = String(router.rule ?? '');
  const priority = router.priority ?? rule.length;
  const entryPoints = (router.entryPoints as string[] | undefined) ?? DEFAULT_ENTRY_POINTS;
  const out: TraefikObject = {
    entryPoints,
    service: router.service,
    rule,
    priority: typeof priority === 'bigint' ? Number(priority) : priority,
    priorityStr: String(priority),
    observability: { accessLogs: true, metrics: true, tracing: true, traceVerbosity: 'minimal' },
    status: 'enabled',
    using: entryPoints,
    name: `${key}@${provider}`,
    provider,
  };
  if (Array.isArray(router.middlewares))
    out.middlewares = (router.middlewares as string[]).map((name) => qualify(name, provider));
  if (router.tls !== undefined) {
    const tls = router.tls as JsonObject;
    out.tls = { ...tls, options: tls.options ?? 'default' };
  }
  return { ...out, ...extra };
}

/** Every router of `config.http.routers` as Traefik lists it (after the HTTP provider took the document). */
export function reportedDocument(config: JsonObject): TraefikObject[] {
  const routers = ((config.http as JsonObject | undefined)?.routers ?? {}) as Record<string, JsonObject>;
  return Object.entries(routers).map(([key, router]) => reported(key, router));
}

/** A reachable instance's reading; lists not given are empty. */
export function reading(parts: {
  source?: string;
  routers?: TraefikObject[];
  services?: TraefikObject[];
  middlewares?: TraefikObject[];
  tcpRouters?: TraefikObject[];
  tcpServices?: TraefikObject[];
  tcpMiddlewares?: TraefikObject[];
  udpRouters?: TraefikObject[];
  udpServices?: TraefikObject[];
  entrypoints?: string[];
  version?: string | null;
}): InstanceReading {
  return {
    source: parts.source ?? 'traefik',
    reachable: true,
    error: null,
    version: parts.version === undefined ? '3.7.15' : parts.version,
    start_date: '2026-11-27T10:00:00Z',
    entrypoints: parts.entrypoints ?? [...DEFAULT_ENTRY_POINTS],
    http: { routers: parts.routers ?? [], services: parts.services ?? [], middlewares: parts.middlewares ?? [] },
    tcp: {
      routers: parts.tcpRouters ?? [],
      services: parts.tcpServices ?? [],
      middlewares: parts.tcpMiddlewares ?? [],
    },
    udp: { routers: parts.udpRouters ?? [], services: parts.udpServices ?? [] },
    read_at: 1_800_000_000_000,
  };
}

/** An instance whose API did not answer. */
export function unreachable(error: string, source = 'traefik'): InstanceReading {
  return { ...reading({ source, version: null }), reachable: false, error, entrypoints: [] };
}

/** A loadBalancer service as `/api/http/services` lists it. */
export function service(
  name: string,
  urls: string[],
  usedBy: string[],
  serverStatus?: Record<string, string>,
): TraefikObject {
  return {
    loadBalancer: {
      servers: urls.map((url) => ({ url })),
      passHostHeader: true,
      responseForwarding: { flushInterval: '100ms' },
    },
    ...(serverStatus ? { serverStatus } : {}),
    status: 'enabled',
    usedBy,
    name,
    provider: name.slice(name.indexOf('@') + 1),
    type: 'loadbalancer',
  };
}

/**
 * What Traefik lists besides the HTTP routers once it took `config` (every middleware and service,
 * used or not, and the TCP/UDP routers; measured on 3.7.15), as `reading()` parts, names only.
 */
export function objectsOf(config: JsonObject): {
  middlewares: TraefikObject[];
  services: TraefikObject[];
  tcpRouters: TraefikObject[];
  tcpServices: TraefikObject[];
  tcpMiddlewares: TraefikObject[];
  udpRouters: TraefikObject[];
  udpServices: TraefikObject[];
} {
  const names = (protocol: string, kind: string): TraefikObject[] => {
    const section = config[protocol] as JsonObject | undefined;
    const list = (section?.[kind] ?? {}) as Record<string, unknown>;
    return Object.keys(list).map((key) => ({ status: 'enabled', name: `${key}@http`, provider: 'http' }));
  };
  return {
    middlewares: names('http', 'middlewares'),
    services: names('http', 'services'),
    tcpRouters: names('tcp', 'routers'),
    tcpServices: names('tcp', 'services'),
    tcpMiddlewares: names('tcp', 'middlewares'),
    udpRouters: names('udp', 'routers'),
    udpServices: names('udp', 'services'),
  };
}
