/**
 * Own resources (API.md §4.24) with a real Traefik 3.7 and no Pangolin: Stack Manager in data
 * source mode `none` (its only source is the test Traefik's API, for the live checker), Traefik
 * polling its provider endpoint. Local resources made through the API answer through Traefik to
 * loopback backends: by host (TLS on websecure, the default), by host and path prefix (web), with
 * an assigned headers middleware that client and backend both see; the live checker says `live`.
 */
import test from 'ava';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { stringify } from 'yaml';
import { client, type Client } from '../proxy-config/targets-support.ts';
import { build, tempDir } from '../helpers/build.ts';
import { hookTeardowns } from '../helpers/hook-context.ts';
import {
  freePort,
  startBackend,
  startTraefik,
  traefikTest,
  TRAEFIK_BIN,
  TRAEFIK_VERSION,
  type Backend,
  type Traefik,
} from '../helpers/traefik.ts';
import { PROVIDER_TOKEN } from '../helpers/traefik-stack.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);

let sm: Client & { base: string };
let traefik: Traefik;
let backends: Record<string, Backend>;

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  const ctx = hook.context(t);
  backends = { app: await startBackend(ctx, 'app'), api: await startBackend(ctx, 'api') };
  const apiPort = await freePort();
  const dataDir = path.join(await tempDir(ctx, 'sm-local-'), 'data');
  await mkdir(dataDir, { recursive: true });
  // mode none: nothing is discovered; the `traefik` source is read by the live checker only
  await writeFile(
    path.join(dataDir, 'datasources.yaml'),
    stringify({
      active: 'none',
      sources: { traefik: { type: 'traefik', url: `http://127.0.0.1:${apiPort}`, poll_interval_s: 1 } },
    }),
    { mode: 0o600 },
  );
  const app = await build(ctx, {
    dataDir,
    config: {
      auth: { mode: 'off' },
      provider: { token: PROVIDER_TOKEN },
      templates: { seed: false },
      live: { settle_s: 1, interval_s: 1 },
      datasources: { active: 'none' },
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  sm = { base, ...client(base) };
  traefik = await startTraefik(ctx, {
    providerUrl: `${base}/api/v1/proxy-config`,
    token: PROVIDER_TOKEN,
    withoutBadger: true,
    ports: { traefik: apiPort },
  });
});

async function liveState(id: string, state: string): Promise<any> {
  let last: unknown;
  try {
    return await waitFor(
      async () => {
        last = (await sm.call('GET', `/api/resources/${id}`)).json?.live;
        return (last as { state?: string })?.state === state ? last : null;
      },
      5_000,
      100,
    );
  } catch (error) {
    throw new Error(`${id} never ${state}: ${JSON.stringify(last)}`, { cause: error });
  }
}

e2e('mode none: a local resource with servers and a headers middleware answers through Traefik, live', async (t) => {
  const status = await sm.call('GET', '/api/proxy-config/status');
  t.is(status.json.mode, 'none', status.text);
  const middleware = await sm.call('POST', '/api/middlewares', {
    id: 'stamp',
    name: 'Stamp',
    type: 'headers',
    config: { customRequestHeaders: { 'X-Via-Sm': 'local' }, customResponseHeaders: { 'X-Stamp': 'own-resource' } },
  });
  t.is(middleware.status, 201, middleware.text);
  const created = await sm.call('POST', '/api/resources', {
    id: 'app',
    name: 'App',
    hosts: ['app.test'],
    servers: [backends.app.url],
    middlewares: [{ middleware_id: 'stamp', priority: 100 }],
  });
  t.is(created.status, 201, created.text);
  const started = Date.now();

  // websecure is the default entry point, with TLS on (Traefik's default certificate)
  const reply = await traefik.waitForReply(
    { entryPoint: 'websecure', host: 'app.test', path: '/hello?x=1' },
    (r) => r.status === 200,
  );
  t.log(`200 through Traefik ${((Date.now() - started) / 1000).toFixed(1)} s after POST`);
  t.is(reply.json.backend, 'app');
  t.is(reply.json.url, '/hello?x=1');
  t.is(reply.headers['x-stamp'], 'own-resource');
  const seen = backends.app.requests.at(-1)!;
  t.is(seen.headers.host, 'app.test');
  t.is(seen.headers['x-via-sm'], 'local');
  t.is(seen.headers['x-forwarded-proto'], 'https');
  // another host is not routed
  t.is((await traefik.request({ entryPoint: 'websecure', host: 'other.test' })).status, 404);

  const router = await traefik.api('/api/http/routers/app@http');
  t.like(router, { status: 'enabled', rule: 'Host(`app.test`)', service: 'app-service' });
  t.deepEqual(router.middlewares, ['stamp@http']);

  const live = await liveState('app', 'live');
  t.log(`live ${((Date.now() - started) / 1000).toFixed(1)} s after POST`);
  t.deepEqual(live.instances, [{ source: 'traefik', state: 'live', errors: [], traefik_version: TRAEFIK_VERSION }]);
});

e2e('mode none: a host + path prefix resource on web reaches its backend only under the prefix', async (t) => {
  const created = await sm.call('POST', '/api/resources', {
    id: 'api',
    name: 'API',
    hosts: ['svc.test'],
    path_prefix: '/api',
    entrypoints: ['web'],
    servers: [backends.api.url],
  });
  t.is(created.status, 201, created.text);
  t.is(created.json.rule, 'Host(`svc.test`) && PathPrefix(`/api`)');
  t.is(created.json.tls, null);
  const reply = await traefik.waitForReply(
    { entryPoint: 'web', host: 'svc.test', path: '/api/items' },
    (r) => r.status === 200,
  );
  t.is(reply.json.backend, 'api');
  t.is(reply.json.url, '/api/items');
  t.is(backends.api.requests.at(-1)!.headers.host, 'svc.test');
  t.is((await traefik.request({ entryPoint: 'web', host: 'svc.test', path: '/other' })).status, 404);
  // no TLS: websecure does not route it
  t.is((await traefik.request({ entryPoint: 'websecure', host: 'svc.test', path: '/api/items' })).status, 404);
  await liveState('api', 'live');

  // PUT moves it to another prefix; Traefik follows
  const put = await sm.call('PUT', '/api/resources/api', {
    name: 'API',
    hosts: ['svc.test'],
    path_prefix: '/v2',
    entrypoints: ['web'],
    servers: [backends.api.url],
  });
  t.is(put.status, 200, put.text);
  const moved = await traefik.waitForReply(
    { entryPoint: 'web', host: 'svc.test', path: '/v2/x' },
    (r) => r.status === 200,
  );
  t.is(moved.json.url, '/v2/x');
  t.is((await traefik.request({ entryPoint: 'web', host: 'svc.test', path: '/api/items' })).status, 404);

  // DELETE: the router and its service go
  t.is((await sm.call('DELETE', '/api/resources/api')).status, 204);
  await traefik.waitForReply({ entryPoint: 'web', host: 'svc.test', path: '/v2/x' }, (r) => r.status === 404);
  t.is((await sm.call('GET', '/api/services/api-service')).status, 404);
});
