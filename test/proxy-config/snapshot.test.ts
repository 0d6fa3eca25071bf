/**
 * The provider config snapshot in data/.cache (issue 11): saved on every generation, served stale at
 * the next start while nothing of this run is generated (status `starting`), and served by the
 * early handler before the app exists.
 */
import test from 'ava';
import { createServer } from 'node:http';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { build } from '../helpers/build.ts';
import { harness } from '../resources/support.ts';
import { waitFor } from '../helpers/wait.ts';
import { readConfigSnapshot } from '../../core/config-snapshot.ts';
import { earlyHandler } from '../../core/early-server.ts';

test('a restart serves the saved config, stale, before its own first generation', async (t) => {
  const { app, fake, dataDir } = await harness(t);
  await app.proxyConfig.regenerate();
  const good = await app.inject({ url: '/api/proxy-config' });
  await waitFor(async () => (await readConfigSnapshot(dataDir))?.etag === good.headers.etag, 10_000);
  await app.close();
  fake.state.fault = '502';
  // the upstream cache removed, the snapshot kept: the new instance has nothing of its own to serve
  for (const entry of ['upstream-pangolin.json', 'upstream-traefik.json'])
    await rm(path.join(dataDir, '.cache', entry), { force: true });
  const again = await build(t, { dataDir, config: { auth: { mode: 'off' }, templates: { seed: false } } });
  const served = await again.inject({ url: '/api/proxy-config' });
  t.is(served.statusCode, 200);
  t.is(served.body, good.body);
  t.is(served.headers.etag, good.headers.etag);
  t.is(served.headers['x-config-stale'], 'true');
  t.is(
    (await again.inject({ url: '/api/proxy-config', headers: { 'if-none-match': String(good.headers.etag) } }))
      .statusCode,
    304,
  );
  const status = await again.inject({ url: '/api/proxy-config/status' });
  t.is(status.statusCode, 200);
  t.like(status.json(), { status: 'starting', stale: true, etag: String(good.headers.etag).slice(1, -1) });
});

test('before the app exists the early handler serves the snapshot, liveness, and 503 for the rest (health: starting)', async (t) => {
  const body = Buffer.from(
    `${JSON.stringify({ http: { routers: { a: { rule: 'Host(`a`)', service: 's'.repeat(2000) } } } })}\n`,
  );
  const handler = earlyHandler({ etag: '"abc"', generatedAt: '2026-11-24T00:00:00.000Z', body }, 'traefik-secret');
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const auth = { authorization: 'Bearer traefik-secret' };

  const served = await fetch(`${base}/api/v1/proxy-config`, { headers: auth });
  t.is(served.status, 200);
  t.is(served.headers.get('etag'), '"abc"');
  t.is(served.headers.get('x-config-stale'), 'true');
  t.is(served.headers.get('x-config-generated-at'), '2026-11-24T00:00:00.000Z');
  t.deepEqual(Buffer.from(await served.arrayBuffer()), body);
  t.is((await fetch(`${base}/api/proxy-config`, { headers: { ...auth, 'if-none-match': '"abc"' } })).status, 304);
  // the gzip form is compressed on the thread pool after the handler is made: plain until then
  const getGzip = () =>
    new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      import('node:http').then(({ get }) =>
        get(`${base}/api/v1/traefik-config`, { headers: { ...auth, 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res
            .on('data', (c: Buffer) => chunks.push(c))
            .on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }))
            .on('error', reject);
        }),
      );
    });
  const zipped = await waitFor(async () => {
    const answer = await getGzip();
    if (answer.encoding === undefined) t.deepEqual(answer.body, body); // the plain form meanwhile
    return answer.encoding === 'gzip' ? answer.body : undefined;
  }, 5000);
  t.deepEqual(gunzipSync(zipped), body);

  t.is((await fetch(`${base}/api/v1/proxy-config`)).status, 503, 'provider.token is still required');
  // readiness says starting (not every route is served yet), liveness says the process is up
  const health = await fetch(`${base}/api/health`);
  t.is(health.status, 503);
  t.is(health.headers.get('retry-after'), '1');
  t.like(await health.json(), { id: 'starting', status: 'starting' });
  const live = await fetch(`${base}/api/health/live`);
  t.is(live.status, 200);
  t.like(await live.json(), { status: 'starting' });
  const other = await fetch(`${base}/api/middlewares`);
  t.is(other.status, 503);
  t.is(((await other.json()) as { id: string }).id, 'unhealthy');
  t.is(other.headers.get('retry-after'), '1');
});
