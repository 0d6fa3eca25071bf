/**
 * A fake Traefik API on node:http 127.0.0.1 for the live-status tests (API.md §4.19): the lists of
 * `/api/{http,tcp,udp}/…` and `/api/entrypoints` with Traefik's paging (`per_page`, `page`,
 * `X-Next-Page`, 1 on the last page), `/api/version` and `/api/overview`, all mutable. `load()` fills
 * the HTTP, TCP and UDP lists the way Traefik 3.7 reports a provider document (shapes measured on 3.7.15, see
 * /tmp/live-shared.md): qualified middlewares, default entry points, priority = rule length when
 * unset, `tls: {}` → `{options: "default"}`. Faults: `down()` (connection refused), `mode = '500'`,
 * `mode = 'hang'` (never answers; `close()` ends those sockets).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { stringifyCanonical } from '../../model/lossless-json.ts';

export type TraefikItem = Record<string, any>;

export interface FakeTraefikLists {
  entrypoints: TraefikItem[];
  http: { routers: TraefikItem[]; services: TraefikItem[]; middlewares: TraefikItem[] };
  tcp: { routers: TraefikItem[]; services: TraefikItem[]; middlewares: TraefikItem[] };
  udp: { routers: TraefikItem[]; services: TraefikItem[] };
}

export interface FakeTraefikApi {
  url: string;
  lists: FakeTraefikLists;
  version: { Version: string; Codename: string; startDate: string };
  /** 'ok' answers; '500' answers every request with HTTP 500; 'hang' never answers */
  mode: 'ok' | '500' | 'hang';
  /** most items per page, whatever `per_page` asks (null: as asked, default 100 like Traefik) */
  pageSize: number | null;
  /** every request's path and query, in order */
  requests: string[];
  /** Fills the lists from a provider document as Traefik reports it (our objects `@http`). */
  load(document: Record<string, any>): void;
  /** One HTTP router by its full name (`x@http`), to change in place. */
  router(name: string): TraefikItem;
  /** Stops listening: connection refused until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_ENTRY_POINTS = ['web', 'websecure'];
const qualify = (name: string) => (name.includes('@') ? name : `${name}@http`);

/** Traefik's report of one router of the HTTP provider document. */
export function reportedRouter(key: string, router: Record<string, any>, entryPoints: string[]): TraefikItem {
  const rule = String(router.rule ?? '');
  const priority = router.priority ?? rule.length;
  const item: TraefikItem = {
    entryPoints: router.entryPoints ?? entryPoints,
    service: router.service,
    rule,
    priority,
    priorityStr: String(priority),
    status: 'enabled',
    using: router.entryPoints ?? entryPoints,
    name: `${key}@http`,
    provider: 'http',
  };
  if (Array.isArray(router.middlewares) && router.middlewares.length > 0)
    item.middlewares = router.middlewares.map(qualify);
  if (router.tls) item.tls = { options: 'default', ...router.tls };
  return item;
}

function reportedServices(services: Record<string, any> = {}): TraefikItem[] {
  return Object.entries(services).map(([key, service]) => {
    const servers: Array<{ url?: string }> = service.loadBalancer?.servers ?? [];
    const item: TraefikItem = { ...service, status: 'enabled', usedBy: [], name: `${key}@http`, provider: 'http' };
    if (service.loadBalancer) {
      item.type = 'loadbalancer';
      item.serverStatus = Object.fromEntries(servers.filter((s) => s.url).map((s) => [s.url, 'UP']));
    }
    return item;
  });
}

function reportedMiddlewares(middlewares: Record<string, any> = {}): TraefikItem[] {
  return Object.entries(middlewares).map(([key, middleware]) => {
    const type = Object.keys(middleware)[0] ?? 'unknown';
    return { ...middleware, status: 'enabled', usedBy: [], name: `${key}@http`, provider: 'http', type };
  });
}

/** Starts the fake on 127.0.0.1, port 0; close it at teardown. */
export async function startFakeTraefikApi(): Promise<FakeTraefikApi> {
  const sockets = new Set<Socket>();
  const fake: FakeTraefikApi = {
    url: '',
    lists: {
      entrypoints: DEFAULT_ENTRY_POINTS.map((name) => ({ name, address: ':0' })),
      http: { routers: [], services: [], middlewares: [] },
      tcp: { routers: [], services: [], middlewares: [] },
      udp: { routers: [], services: [] },
    },
    version: { Version: '3.7.15', Codename: 'fake', startDate: '2026-01-01T00:00:00Z' },
    mode: 'ok',
    pageSize: null,
    requests: [],
    load(document) {
      const names = fake.lists.entrypoints.map((e) => e.name as string);
      const routers = Object.entries<Record<string, any>>(document.http?.routers ?? {});
      fake.lists.http = {
        routers: routers.map(([key, router]) => reportedRouter(key, router, names)),
        services: reportedServices(document.http?.services),
        middlewares: reportedMiddlewares(document.http?.middlewares),
      };
      // Traefik lists every configured object, used or not (measured on 3.7.15)
      const named = (objects: Record<string, any> = {}) =>
        Object.entries(objects).map(([key, object]) => ({
          ...object,
          status: 'enabled',
          name: `${key}@http`,
          provider: 'http',
        }));
      fake.lists.tcp = {
        routers: named(document.tcp?.routers),
        services: named(document.tcp?.services),
        middlewares: named(document.tcp?.middlewares),
      };
      fake.lists.udp = { routers: named(document.udp?.routers), services: named(document.udp?.services) };
    },
    router(name) {
      const found = fake.lists.http.routers.find((r) => r.name === name);
      if (!found) throw new Error(`the fake Traefik has no router ${name}`);
      return found;
    },
    down: () => stop(),
    up: () => listen(port),
    close: () => stop(),
  };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    fake.requests.push(url.pathname + url.search);
    if (fake.mode === 'hang') return; // the socket stays open until close()
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(stringifyCanonical(body));
    };
    if (fake.mode === '500') return send(500, { message: 'injected fault' });
    const path = url.pathname.replace(/^\/api\//, '');
    if (path === 'version') return send(200, fake.version);
    if (path === 'overview') return send(200, {});
    const [protocol, kind] = path.split('/');
    const list: TraefikItem[] | undefined =
      path === 'entrypoints' ? fake.lists.entrypoints : (fake.lists as any)[protocol]?.[kind];
    if (!Array.isArray(list)) return send(404, { message: '404 page not found' });
    const size = fake.pageSize ?? (Number(url.searchParams.get('per_page')) || 100);
    const page = Number(url.searchParams.get('page')) || 1;
    const start = (page - 1) * size;
    if (start > 0 && start >= list.length)
      return send(400, { message: `invalid request: page: ${page}, per_page: ${size}` });
    const next = start + size < list.length ? String(page + 1) : '1';
    return send(200, list.slice(start, start + size), { 'x-next-page': next });
  });
  // like Traefik (Go's idle timeout is minutes): Node's 5 s default races the checker's keep-alive reuse
  server.keepAliveTimeout = 120_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  let port = 0;
  function listen(at: number): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }
  function stop(): Promise<void> {
    if (!server.listening) return Promise.resolve();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    return closed;
  }

  await listen(0);
  fake.url = `http://127.0.0.1:${port}`;
  return fake;
}
