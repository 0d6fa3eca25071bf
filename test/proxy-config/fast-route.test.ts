/**
 * The provider GET answered before Fastify (core/fast-routes.ts, plugins/proxy-config/fast-route.ts):
 * through the hot-reload host on a real socket, every answer of the fast path equals Fastify's own
 * answer to the same request (inject() always runs Fastify's routing and hooks), and every request
 * the fast path cannot fully answer reaches Fastify.
 */
import test, { type ExecutionContext } from 'ava';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { AppHost } from '../../core/app-host.ts';
import { buildApp } from '../../core/app.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { tempDir, testConfig } from '../helpers/build.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { waitFor } from '../helpers/wait.ts';
import { writeSources } from '../resources/support.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

interface Served {
  app: FastifyInstance;
  fake: Awaited<ReturnType<typeof startFakeUpstream>>;
  base: string;
  /** How many requests the fast path answered so far. */
  fast: () => number;
  logLines: string[];
}

/** An app behind the hot-reload host (as `npm start` runs it), its startup sync done, the gzip form ready. */
async function serve(t: ExecutionContext, overrides: Record<string, unknown> = {}): Promise<Served> {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dataDir = path.join(await tempDir(t), 'data');
  await writeSources(dataDir, fake);
  const config = testConfig(dataDir, {
    auth: { mode: 'off' },
    datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' },
    ...overrides,
  });
  const logLines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const host = new AppHost(
    (generation, serverFactory) => buildApp({ config, groups: builtinGroups, generation, serverFactory, logStream }),
    pino({ level: 'silent' }),
  );
  t.teardown(() => host.close());
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', resolve));
  const app = await host.start();
  const report = await app.resources.started();
  if (!report.ok) throw new Error(`startup sync failed: ${report.error}`);
  await app.proxyConfig.regenerate();
  await waitFor(() => app.proxyConfig.current()?.json.gzip, 120_000);
  // counts what the fast path answers; the host calls the method through this object per request
  let answered = 0;
  const fastRoutes = app.fastRoutes;
  const original = fastRoutes.serve.bind(fastRoutes);
  fastRoutes.serve = (req, res) => {
    const done = original(req, res);
    if (done) answered++;
    return done;
  };
  const { port } = host.server.address() as AddressInfo;
  return { app, fake, base: `http://127.0.0.1:${port}`, fast: () => answered, logLines };
}

/** The raw answer over the socket (no decompression). */
function get(base: string, url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(`${base}${url}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

/** Fastify's own answer to the same request. */
async function viaFastify(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await app.inject({ url, headers });
  return { status: res.statusCode, headers: res.headers as Answer['headers'], body: res.rawPayload };
}

/** Headers that depend on the connection or the moment, not on the answer. */
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'x-request-id']);
const answerHeaders = (answer: Answer) =>
  Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !TRANSPORT.has(name)));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('the fast path answers plain, gzip, YAML and 304 polls exactly as the Fastify route does', async (t) => {
  const { app, base, fast } = await serve(t);
  const etag = String((await viaFastify(app, '/api/v1/proxy-config')).headers.etag);
  const cases: Record<string, string>[] = [
    {},
    { 'accept-encoding': 'gzip' },
    { 'accept-encoding': 'gzip;q=0, deflate' },
    { accept: 'application/json' },
    { accept: 'application/json; version=1' },
    { accept: 'application/yaml' },
    { accept: 'application/yaml', 'accept-encoding': 'gzip' },
    { 'if-none-match': etag },
    { 'if-none-match': `"other", W/${etag}` },
    { 'if-none-match': '"other"' },
  ];
  // YAML is serialised on its first request and then compressed on the thread pool: until that
  // is done both routes answer YAML uncompressed. Compare them once the gzip bytes exist (CI once
  // caught the fast path before and Fastify after the compression finished).
  await waitFor(
    async () =>
      (await get(base, '/api/v1/proxy-config', { accept: 'application/yaml', 'accept-encoding': 'gzip' })).headers[
        'content-encoding'
      ] === 'gzip' || undefined,
    5_000,
  );
  for (const prefix of ['/api/proxy-config', '/api/v1/proxy-config', '/api/v1/traefik-config']) {
    for (const headers of cases) {
      const what = `${prefix} ${JSON.stringify(headers)}`;
      const before = fast();
      const answer = await get(base, prefix, headers);
      t.is(fast(), before + 1, `${what}: answered by the fast path`);
      const reference = await viaFastify(app, prefix, headers);
      t.is(answer.status, reference.status, what);
      t.deepEqual(answerHeaders(answer), answerHeaders(reference), what);
      t.true(answer.body.equals(reference.body), `${what}: same body bytes`);
      t.regex(String(answer.headers['x-request-id']), UUID, what);
    }
  }
  const gz = await get(base, '/api/v1/proxy-config', { 'accept-encoding': 'gzip' });
  t.is(gz.headers['content-encoding'], 'gzip');
  t.is(gz.headers.vary, 'Accept, Accept-Encoding');
  t.is(gz.headers['api-version'], '1');
  t.is((await get(base, '/api/v1/proxy-config', { 'if-none-match': etag })).status, 304);
  // the caller's request id is echoed, a malformed one replaced
  t.is(
    (await get(base, '/api/v1/proxy-config', { 'x-request-id': 'trace-1.a_b' })).headers['x-request-id'],
    'trace-1.a_b',
  );
  t.regex(
    String((await get(base, '/api/v1/proxy-config', { 'x-request-id': 'bad id!' })).headers['x-request-id']),
    UUID,
  );
});

test('a stale config (failing upstream) is answered with X-Config-Stale, as by the Fastify route', async (t) => {
  const { app, fake, base, fast } = await serve(t);
  fake.state.fault = '500';
  t.true((await app.inject({ method: 'POST', url: '/api/proxy-config/invalidate' })).json().stale);
  for (const headers of [{}, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
    const before = fast();
    const answer = await get(base, '/api/v1/proxy-config', headers);
    t.is(fast(), before + 1);
    t.is(answer.headers['x-config-stale'], 'true');
    t.deepEqual(answerHeaders(answer), answerHeaders(await viaFastify(app, '/api/v1/proxy-config', headers)));
  }
  fake.state.fault = null;
  t.false((await app.inject({ method: 'POST', url: '/api/proxy-config/invalidate' })).json().stale);
  t.is((await get(base, '/api/v1/proxy-config')).headers['x-config-stale'], undefined);
});

test('requests the fast path does not fully know reach Fastify: queries, HEAD, other versions, other paths', async (t) => {
  const { app, base, fast } = await serve(t);
  const before = fast();
  const json = await get(base, '/api/v1/proxy-config?format=json');
  t.is(json.status, 200);
  t.true(json.body.equals((await viaFastify(app, '/api/v1/proxy-config')).body));
  t.is((await get(base, '/api/v1/proxy-config?format=xml')).status, 422);
  const head = await get(base, '/api/v1/proxy-config', {}, 'HEAD');
  t.is(head.status, 200);
  t.is(head.body.length, 0);
  const versioned = await get(base, '/api/v1/proxy-config', { accept: 'application/json; version=2' });
  t.is(versioned.status, 406);
  t.is(JSON.parse(versioned.body.toString()).id, 'unsupported_version');
  t.is((await get(base, '/api/v1/proxy-config/')).status, 404);
  t.is((await get(base, '/api/v1/proxy-config/status')).status, 200);
  t.is(fast(), before, 'none of them was answered by the fast path');
});

test('provider.token and debug logging: only the requests the fast path can answer alike take it', async (t) => {
  const { app, base, fast, logLines } = await serve(t, { provider: { token: 'traefik-secret' } });
  const bearer = { authorization: 'Bearer traefik-secret' };
  let before = fast();
  const ok = await get(base, '/api/v1/proxy-config', bearer);
  t.is(ok.status, 200);
  t.is(fast(), before + 1, 'the provider token is answered by the fast path');
  t.deepEqual(answerHeaders(ok), answerHeaders(await viaFastify(app, '/api/v1/proxy-config', bearer)));

  before = fast();
  const missing = await get(base, '/api/v1/proxy-config');
  t.is(missing.status, 401);
  t.is(JSON.parse(missing.body.toString()).id, 'auth_failed');
  t.is((await get(base, '/api/v1/proxy-config', { authorization: 'Bearer wrong' })).status, 401);
  t.is((await get(base, '/api/v1/proxy-config', { authorization: 'Basic x' })).status, 401);
  t.is(fast(), before, 'failures were answered by Fastify');

  // provider polls log at debug (core/request-log.ts): with debug on, Fastify serves and logs them
  app.log.level = 'debug';
  before = fast();
  t.is((await get(base, '/api/v1/proxy-config', { ...bearer, 'x-request-id': 'debug-poll' })).status, 200);
  t.is(fast(), before);
  const line = JSON.parse(await waitFor(() => logLines.find((l) => l.includes('"debug-poll"')), 120_000));
  t.is(line.level, 20);
  t.is(line.msg, 'request completed');
  t.is(line.res.statusCode, 200);
});

test('with CORS on, provider requests are answered by Fastify (with its CORS headers)', async (t) => {
  const { base, fast } = await serve(t, { cors: { origins: ['https://ui.example.com'] } });
  const cors = await get(base, '/api/v1/proxy-config', { origin: 'https://ui.example.com' });
  t.is(cors.status, 200);
  t.is(cors.headers['access-control-allow-origin'], 'https://ui.example.com');
  t.regex(String((await get(base, '/api/v1/proxy-config')).headers['access-control-expose-headers']), /X-Config-Stale/);
  t.is(fast(), 0);
});
