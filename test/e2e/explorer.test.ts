/**
 * The proxy explorer (API.md §4.7) against a real Traefik's API: every answer equals what Traefik
 * itself answers, lists longer than Traefik's 1000-item page are read whole by following
 * `X-Next-Page`, and `type=all` carries the three protocols.
 */
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { send, startBackend, traefikTest, TRAEFIK_BIN, TRAEFIK_VERSION, type Traefik } from '../helpers/traefik.ts';
import { parseLossless } from '../../model/lossless-json.ts';

/** More resources than one page of Traefik's API (`per_page` 1000): our reader must follow `X-Next-Page`. */
const RESOURCES = 520;

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

/** Traefik's own answer for a list, every page, as the raw JSON text of each item (exact big priorities). */
async function traefikList(traefik: Traefik, path: string): Promise<{ items: unknown[]; pages: number }> {
  const items: unknown[] = [];
  let page = 1;
  let pages = 0;
  for (;;) {
    const separator = path.includes('?') ? '&' : '?';
    const port = Number(new URL(traefik.apiBase).port);
    const reply = await send(port, { host: '127.0.0.1', path: `${path}${separator}per_page=1000&page=${page}` });
    if (reply.status !== 200) throw new Error(`Traefik ${path}: ${reply.status} ${reply.body}`);
    pages++;
    items.push(...(parseLossless(reply.body) as unknown[]));
    const next = Number(reply.headers['x-next-page']);
    if (!(next > page)) return { items, pages };
    page = next;
  }
}

/** Our answer parsed the same way (lossless: MaxInt64 priorities stay exact). */
async function ours(path: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const reply = await stack.sm.call('GET', path);
  return { status: reply.status, body: parseLossless(reply.text), headers: reply.headers };
}

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  const context = hook.context(t);
  const tcpBackend = await startBackend(context, 'tcp');
  const resources = Array.from({ length: RESOURCES }, (_, i) => ({
    id: i + 1,
    name: `app${i + 1}`,
    host: `app${i + 1}.test`,
    backends: ['a'],
  }));
  stack = await startStack(context, {
    resources,
    traefik: { entryPoints: { 'tcp-db': 'tcp', 'udp-dns': 'udp' } },
  });
  // a TCP and a UDP router besides the HTTP ones, so type=all has three non-empty lists
  const document = stack.pangolin.document as Record<string, any>;
  document.tcp = {
    routers: { 'db-router': { entryPoints: ['tcp-db'], rule: 'HostSNI(`*`)', service: 'db-service' } },
    services: { 'db-service': { loadBalancer: { servers: [{ address: `127.0.0.1:${tcpBackend.port}` }] } } },
  };
  document.udp = {
    routers: { 'dns-router': { entryPoints: ['udp-dns'], service: 'dns-service' } },
    services: { 'dns-service': { loadBalancer: { servers: [{ address: '127.0.0.1:53' }] } } },
  };
  await stack.traefik.waitForRouters(['db-router'], 'tcp');
  await stack.traefik.waitForRouters(['dns-router'], 'udp');
  // the explorer reads the `traefik` data source: point it at the test Traefik's API
  const put = await stack.sm.call('PUT', '/api/datasource/traefik', { type: 'traefik', url: stack.traefik.apiBase });
  if (put.status !== 200 && put.status !== 201) throw new Error(`PUT datasource: ${put.status} ${put.text}`);
});

e2e('version and overview are Traefik’s', async (t) => {
  const version = await ours('/api/proxy/version');
  t.is(version.status, 200);
  const direct = await stack.traefik.api('/api/version');
  t.deepEqual(version.body, { version: TRAEFIK_VERSION, codename: direct.Codename, start_date: direct.startDate });

  const overview = await ours('/api/proxy/overview');
  t.is(overview.status, 200);
  t.deepEqual(overview.body, await stack.traefik.api('/api/overview'));
  t.true(overview.body.http.routers.total > 1000, `total ${overview.body.http.routers.total}`);
});

e2e('HTTP routers: all of them across Traefik’s pages, equal to Traefik’s list, paged by page/page_size', async (t) => {
  const direct = await traefikList(stack.traefik, '/api/http/routers');
  t.true(direct.pages >= 2, `Traefik answered in ${direct.pages} page(s)`);
  const all = await ours('/api/proxy/routers');
  t.is(all.status, 200);
  t.is(all.body.length, direct.items.length);
  t.deepEqual(all.body, direct.items);
  t.is(all.headers['x-total-count'], String(direct.items.length));
  // Traefik's internal routers keep their MaxInt64-1 priority digit for digit
  const api = all.body.find((router: any) => router.name === 'api@internal');
  t.is(String(api?.priority), '9223372036854775806');

  const page = await ours('/api/proxy/routers?page=2&page_size=400');
  t.deepEqual(page.body, direct.items.slice(400, 800));
  t.regex(String(page.headers.link), /page=3&page_size=400>; rel="next"/);
  const lastPage = Math.ceil(direct.items.length / 400);
  const last = await ours(`/api/proxy/routers?page=${lastPage}&page_size=400`);
  t.deepEqual(last.body, direct.items.slice((lastPage - 1) * 400));
  t.notRegex(String(last.headers.link), /rel="next"/);
});

e2e('search goes to Traefik, provider filters exactly', async (t) => {
  const search = await ours('/api/proxy/routers?search=app519');
  t.deepEqual(search.body, (await traefikList(stack.traefik, '/api/http/routers?search=app519')).items);
  t.true(search.body.length >= 1);
  const internal = await ours('/api/proxy/routers?provider=internal');
  const direct = (await traefikList(stack.traefik, '/api/http/routers')).items as Array<{ provider: string }>;
  t.deepEqual(
    internal.body,
    direct.filter((router) => router.provider === 'internal'),
  );
  t.true(internal.body.length >= 1);
});

e2e('type=all: the HTTP, TCP and UDP lists of routers, services and middlewares', async (t) => {
  for (const kind of ['routers', 'services', 'middlewares']) {
    const all = await ours(`/api/proxy/${kind}?type=all`);
    t.is(all.status, 200, kind);
    t.deepEqual(all.body.errors, []);
    for (const protocol of ['http', 'tcp', 'udp']) {
      const direct =
        protocol === 'udp' && kind === 'middlewares'
          ? []
          : (await traefikList(stack.traefik, `/api/${protocol}/${kind}`)).items;
      t.deepEqual(all.body[protocol], direct, `${protocol} ${kind}`);
    }
  }
  const all = await ours('/api/proxy/routers?type=all');
  t.truthy(all.body.tcp.find((router: any) => router.name === 'db-router@http'));
  t.truthy(all.body.udp.find((router: any) => router.name === 'dns-router@http'));
  for (const protocol of ['tcp', 'udp']) {
    const single = await ours(`/api/proxy/routers?type=${protocol}`);
    t.deepEqual(single.body, all.body[protocol]);
  }
});

e2e('entrypoints and /api/proxy/data equal Traefik’s parts', async (t) => {
  const entrypoints = await ours('/api/proxy/entrypoints');
  const direct = (await traefikList(stack.traefik, '/api/entrypoints')).items as Array<{ name: string }>;
  t.deepEqual(entrypoints.body, direct);
  t.deepEqual(direct.map((entry) => entry.name).sort(), ['tcp-db', 'traefik', 'udp-dns', 'web', 'websecure']);

  const data = await ours('/api/proxy/data');
  t.is(data.status, 200);
  t.deepEqual(data.body.errors, []);
  t.deepEqual(data.body.overview, await stack.traefik.api('/api/overview'));
  t.is(data.body.version.version, TRAEFIK_VERSION);
  t.deepEqual(data.body.entrypoints, direct);
  t.deepEqual(data.body.http.routers, (await traefikList(stack.traefik, '/api/http/routers')).items);
  t.deepEqual(data.body.tcp.services, (await traefikList(stack.traefik, '/api/tcp/services')).items);
  t.deepEqual(data.body.udp.routers, (await traefikList(stack.traefik, '/api/udp/routers')).items);
  t.false('middlewares' in data.body.udp);
});
