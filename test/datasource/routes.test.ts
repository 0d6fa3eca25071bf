import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { parse as parseYaml } from 'yaml';
import type { ActiveDataSource } from '../../plugins/datasource/index.ts';
import { build, tempDir, type BuildTestOptions } from '../helpers/build.ts';
import { useFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ fake: FakeUpstream }>;
type Context = ExecutionContext<{ fake: FakeUpstream }>;

const PASSWORD = 'S3cret-never-shown-4711';
const MASK = '••••••••';
const PANGOLIN_ROUTERS = 7; // http.routers in fixtures/pangolin/traefik-config.json
const TRAEFIK_ROUTERS = 15; // fixtures/traefik-api/http-routers.json
const TRAEFIK_VERSION = '3.6.24'; // fixtures/traefik-api/version.json

useFakeUpstream(test);

async function setup(
  t: Context,
  options: BuildTestOptions & { urls?: { pangolin: string; traefik: string; active?: string } } = {},
): Promise<FastifyInstance> {
  const { fake } = t.context;
  const urls = options.urls ?? { pangolin: fake.pangolinUrl, traefik: fake.url };
  const datasources = {
    pangolin_url: urls.pangolin,
    traefik_url: urls.traefik,
    ...(urls.active ? { active: urls.active } : {}),
  };
  return build(t, { ...options, config: { auth: { mode: 'off' }, datasources } });
}

/** A logger writing JSON lines into `lines`, so tests can search everything the app logged. */
function captureLogs(): { lines: string[]; logger: BuildTestOptions['logger'] } {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      level: 'trace',
      stream: {
        write: (line: string) => {
          lines.push(line);
        },
      },
    },
  };
}

const fileOf = (app: FastifyInstance) => path.join(app.store.dataDir, 'datasources.yaml');
const readStored = async (app: FastifyInstance) =>
  parseYaml(await readFile(fileOf(app), 'utf8')) as {
    active: string;
    sources: Record<string, Record<string, unknown> & { basic_auth: { username: string; password: string } | null }>;
  };
const put = (app: FastifyInstance, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'PUT', url, payload: payload as object, headers });

function assertError(t: Context, response: LightMyRequestResponse, status: number, id?: string): void {
  t.is(response.statusCode, status, response.body);
  const body = response.json() as { id: unknown; message: unknown };
  t.is(typeof body.id, 'string');
  t.is(typeof body.message, 'string');
  if (id) t.is(body.id, id);
}

test('first start creates datasources.yaml (0600) with pangolin and traefik from the configuration', async (t) => {
  const { fake } = t.context;
  const app = await setup(t);
  const info = await stat(fileOf(app));
  t.is(info.mode & 0o777, 0o600);
  const stored = await readStored(app);
  t.is(stored.active, 'pangolin');
  t.deepEqual(Object.keys(stored.sources).sort(), ['pangolin', 'traefik']);
  t.like(stored.sources.pangolin, {
    type: 'pangolin',
    url: fake.pangolinUrl,
    skip_tls_verify: false,
    basic_auth: null,
    poll_interval_s: 5,
    timeout_ms: 5000,
  });
  t.like(stored.sources.traefik, { type: 'traefik', url: fake.url });

  const list = await app.inject({ method: 'GET', url: '/api/datasource' });
  t.is(list.statusCode, 200);
  t.is(list.headers['x-total-count'], '2');
  const views = list.json() as Array<Record<string, unknown>>;
  t.deepEqual(
    views.map((v) => [v.name, v.active]),
    [
      ['pangolin', true],
      ['traefik', false],
    ],
  );
  t.deepEqual(Object.keys(views[0]).sort(), [
    'active',
    'basic_auth',
    'created_at',
    'etag',
    'last_sync',
    'name',
    'poll_interval_s',
    'skip_tls_verify',
    'timeout_ms',
    'type',
    'updated_at',
    'url',
  ]);
  t.regex(views[0].etag as string, /^[0-9a-f]{32}$/);
  t.regex(views[0].created_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // the startup sync of the discovery poller may already have run: null, or a sync record
  const lastSync = views[0].last_sync as { at?: unknown; ok?: unknown } | null;
  t.true(lastSync === null || (typeof lastSync.at === 'string' && typeof lastSync.ok === 'boolean'));
});

test('the configuration never overwrites an existing datasources.yaml', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const first = await setup(t, { dataDir });
  const before = await readFile(fileOf(first), 'utf8');
  await first.close();
  const second = await setup(t, {
    dataDir,
    urls: { pangolin: 'http://other:3001/api/v1', traefik: 'http://other:8080', active: 'traefik' },
  });
  t.is(await readFile(fileOf(second), 'utf8'), before);
  const active = await second.inject({ method: 'GET', url: '/api/datasource/active' });
  t.is(active.json().name, 'pangolin');
  t.is(active.json().url, t.context.fake.pangolinUrl);
});

test('GET /api/datasource/:name answers 404 for an unknown name and 304 for a matching If-None-Match', async (t) => {
  const app = await setup(t);
  assertError(t, await app.inject({ method: 'GET', url: '/api/datasource/nope' }), 404, 'not_found');
  const one = await app.inject({ method: 'GET', url: '/api/datasource/traefik' });
  t.is(one.statusCode, 200);
  t.is(one.headers.etag, `"${one.json().etag}"`);
  const cached = await app.inject({
    method: 'GET',
    url: '/api/datasource/traefik',
    headers: { 'if-none-match': one.headers.etag as string },
  });
  t.is(cached.statusCode, 304);
  t.is(cached.body, '');
  const active = await app.inject({ method: 'GET', url: '/api/datasource/active' });
  const activeCached = await app.inject({
    method: 'GET',
    url: '/api/datasource/active',
    headers: { 'if-none-match': `W/${active.headers.etag}` },
  });
  t.is(activeCached.statusCode, 304);
});

test('PUT /api/datasource/active switches the source, starts a sync and reports the change', async (t) => {
  const app = await setup(t);
  const reasons: string[] = [];
  app.upstream.setSyncHandler(async (reason) => {
    reasons.push(reason);
    return { ok: true, error: null, changed: false };
  });
  const changes: Array<ActiveDataSource | null> = [];
  app.datasources.onChange((active) => changes.push(active));

  const response = await put(app, '/api/datasource/active', { name: 'traefik' });
  t.is(response.statusCode, 200, response.body);
  t.like(response.json(), { name: 'traefik', active: true });
  t.deepEqual(reasons, ['source_changed']);
  t.is(changes.length, 1);
  t.is(changes[0]?.name, 'traefik');
  t.like(changes[0]?.source, { type: 'traefik', url: t.context.fake.url, poll_interval_s: 5, timeout_ms: 5000 });
  t.is(app.datasources.active()?.name, 'traefik');
  t.is((await readStored(app)).active, 'traefik');
  const list = (await app.inject({ method: 'GET', url: '/api/datasource' })).json() as Array<{
    name: string;
    active: boolean;
  }>;
  t.deepEqual(
    list.map((v) => v.active),
    [false, true],
  );
});

test('PUT /api/datasource/active with an unknown or missing name answers 422 and changes nothing', async (t) => {
  const app = await setup(t);
  const before = await readFile(fileOf(app));
  const unknown = await put(app, '/api/datasource/active', { name: 'ghost' });
  assertError(t, unknown, 422, 'validation_failed');
  t.deepEqual(unknown.json().details, [{ path: '/name', message: 'names no data source: ghost' }]);
  assertError(t, await put(app, '/api/datasource/active', {}), 422, 'validation_failed');
  assertError(t, await app.inject({ method: 'PUT', url: '/api/datasource/active' }), 422, 'validation_failed');
  t.deepEqual(await readFile(fileOf(app)), before);
});

test('PUT /api/datasource/:name creates (201 + Location), replaces (200) and merges omitted fields', async (t) => {
  const app = await setup(t);
  const created = await put(app, '/api/datasource/edge-2', {
    type: 'traefik',
    url: 'https://edge-2.example:8443/',
    skip_tls_verify: true,
  });
  t.is(created.statusCode, 201, created.body);
  t.is(created.headers.location, '/api/datasource/edge-2');
  t.like(created.json(), {
    name: 'edge-2',
    type: 'traefik',
    url: 'https://edge-2.example:8443',
    skip_tls_verify: true,
    basic_auth: null,
    poll_interval_s: 5,
    timeout_ms: 5000,
    active: false,
  });
  t.is(created.headers.etag, `"${created.json().etag}"`);
  const fetched = await app.inject({ method: 'GET', url: created.headers.location as string });
  t.deepEqual(fetched.json(), created.json());

  const merged = await put(app, '/api/datasource/edge-2', {
    timeout_ms: 2500,
    name: 'ignored',
    active: true,
    etag: 'ignored',
  });
  t.is(merged.statusCode, 200, merged.body);
  t.like(merged.json(), { url: 'https://edge-2.example:8443', skip_tls_verify: true, timeout_ms: 2500, active: false });
  t.not(merged.json().etag, created.json().etag);
  t.is(merged.json().created_at, created.json().created_at);

  const replaced = await put(app, '/api/datasource/edge-2', {
    type: 'pangolin',
    url: 'http://pangolin-2:3001/api/v1',
    poll_interval_s: 60,
  });
  t.is(replaced.statusCode, 200);
  t.like(replaced.json(), {
    type: 'pangolin',
    url: 'http://pangolin-2:3001/api/v1',
    skip_tls_verify: true,
    poll_interval_s: 60,
    timeout_ms: 2500,
  });
  t.like((await readStored(app)).sources['edge-2'], { type: 'pangolin', poll_interval_s: 60, timeout_ms: 2500 });
  t.is((await stat(fileOf(app))).mode & 0o777, 0o600);

  const unchanged = await put(app, '/api/datasource/edge-2', {});
  t.is(unchanged.statusCode, 200);
  t.is(unchanged.json().etag, replaced.json().etag);
});

test('creating without type or url answers 422 naming both fields', async (t) => {
  const app = await setup(t);
  const before = await readFile(fileOf(app));
  const response = await put(app, '/api/datasource/new-one', { skip_tls_verify: true });
  assertError(t, response, 422, 'validation_failed');
  t.deepEqual(
    (response.json().details as Array<{ path: string }>).map((d) => d.path),
    ['/type', '/url'],
  );
  t.deepEqual(await readFile(fileOf(app)), before);
});

test('the password never appears in a response or the log; the mask and omission keep it, null removes it', async (t) => {
  const { lines, logger } = captureLogs();
  const { fake } = t.context;
  const app = await setup(t, { logger });
  fake.state.basicAuth = { username: 'reader', password: PASSWORD };
  const bodies: string[] = [];
  const call = async (response: Promise<LightMyRequestResponse>) => {
    const r = await response;
    bodies.push(r.body);
    return r;
  };

  const created = await call(
    put(app, '/api/datasource/secured', {
      type: 'traefik',
      url: fake.url,
      basic_auth: { username: 'reader', password: PASSWORD },
    }),
  );
  t.is(created.statusCode, 201);
  t.deepEqual(created.json().basic_auth, { username: 'reader', password_set: true });
  t.is((await readStored(app)).sources.secured.basic_auth?.password, PASSWORD);

  const masked = await call(
    put(app, '/api/datasource/secured', { basic_auth: { username: 'reader', password: MASK } }),
  );
  t.is(masked.statusCode, 200);
  t.is((await readStored(app)).sources.secured.basic_auth?.password, PASSWORD);
  const renamed = await call(put(app, '/api/datasource/secured', { basic_auth: { username: 'reader2' } }));
  t.deepEqual(renamed.json().basic_auth, { username: 'reader2', password_set: true });
  t.deepEqual((await readStored(app)).sources.secured.basic_auth, { username: 'reader2', password: PASSWORD });
  await call(put(app, '/api/datasource/secured', { basic_auth: { username: 'reader' } }));

  // a probe sends the stored credentials
  const probe = await call(app.inject({ method: 'POST', url: '/api/datasource/secured/test' }));
  t.like(probe.json(), { ok: true, routers: TRAEFIK_ROUTERS });
  await call(app.inject({ method: 'GET', url: '/api/datasource' }));
  await call(app.inject({ method: 'GET', url: '/api/datasource/secured' }));
  await call(put(app, '/api/datasource/active', { name: 'secured' }));
  await call(app.inject({ method: 'GET', url: '/api/datasource/active' }));
  await call(app.inject({ method: 'GET', url: '/api/health?deep=true' }));
  // a failing validation must not echo it either
  await call(
    put(app, '/api/datasource/secured', {
      url: `http://reader:${PASSWORD}@host`,
      basic_auth: { username: 'a:b', password: PASSWORD },
    }),
  );
  t.is(app.datasources.active()?.source.basic_auth?.password, PASSWORD, 'the poller gets the credentials');
  t.false(JSON.stringify(app.datasources.list()).includes(PASSWORD));

  await call(put(app, '/api/datasource/active', { name: 'pangolin' }));
  const removed = await call(put(app, '/api/datasource/secured', { basic_auth: null }));
  t.is(removed.json().basic_auth, null);
  t.is((await readStored(app)).sources.secured.basic_auth, null);
  const alias = await call(
    put(app, '/api/datasource/secured', { basicAuth: { username: 'alias', password: PASSWORD } }),
  );
  t.deepEqual(alias.json().basic_auth, { username: 'alias', password_set: true });
  t.deepEqual((await readStored(app)).sources.secured.basic_auth, { username: 'alias', password: PASSWORD });

  t.true(bodies.length >= 14);
  for (const body of bodies) t.false(body.includes(PASSWORD), body);
  t.true(lines.length > 0);
  for (const line of lines) t.false(line.includes(PASSWORD), line);
});

test('credentials cannot be created without a username or a password', async (t) => {
  const app = await setup(t);
  const noPassword = await put(app, '/api/datasource/edge', {
    type: 'traefik',
    url: 'http://edge:8080',
    basic_auth: { username: 'u', password: MASK },
  });
  assertError(t, noPassword, 422, 'validation_failed');
  t.is(noPassword.json().details[0].path, '/basic_auth/password');
  const noUser = await put(app, '/api/datasource/traefik', { basicAuth: { password: 'x' } });
  assertError(t, noUser, 422, 'validation_failed');
  t.is(noUser.json().details[0].path, '/basicAuth/username');
});

test('DELETE /api/datasource/:name answers 409 in_use for the active source and 204 otherwise', async (t) => {
  const app = await setup(t);
  const before = await readFile(fileOf(app));
  const refused = await app.inject({ method: 'DELETE', url: '/api/datasource/pangolin' });
  assertError(t, refused, 409, 'in_use');
  t.deepEqual(refused.json().details, [{ path: '/api/datasource/active', message: 'is the active data source' }]);
  t.deepEqual(await readFile(fileOf(app)), before);

  const deleted = await app.inject({ method: 'DELETE', url: '/api/datasource/traefik' });
  t.is(deleted.statusCode, 204);
  t.is(deleted.body, '');
  t.deepEqual(Object.keys((await readStored(app)).sources), ['pangolin']);
  assertError(t, await app.inject({ method: 'GET', url: '/api/datasource/traefik' }), 404, 'not_found');
  assertError(t, await app.inject({ method: 'DELETE', url: '/api/datasource/traefik' }), 404, 'not_found');
});

test('If-Match: a stale ETag answers 412 on PUT and DELETE, the current one is accepted', async (t) => {
  const app = await setup(t);
  const etag = (await app.inject({ method: 'GET', url: '/api/datasource/traefik' })).headers.etag as string;
  const before = await readFile(fileOf(app));
  const stale = '"0123456789abcdef0123456789abcdef"';
  assertError(
    t,
    await put(app, '/api/datasource/traefik', { timeout_ms: 1000 }, { 'if-match': stale }),
    412,
    'precondition_failed',
  );
  assertError(
    t,
    await app.inject({ method: 'DELETE', url: '/api/datasource/traefik', headers: { 'if-match': stale } }),
    412,
    'precondition_failed',
  );
  assertError(
    t,
    await put(app, '/api/datasource/fresh', { type: 'traefik', url: 'http://x:1' }, { 'if-match': '*' }),
    412,
    'precondition_failed',
  );
  t.deepEqual(await readFile(fileOf(app)), before);

  const updated = await put(app, '/api/datasource/traefik', { timeout_ms: 1000 }, { 'if-match': `W/${etag}` });
  t.is(updated.statusCode, 200);
  assertError(
    t,
    await app.inject({ method: 'DELETE', url: '/api/datasource/traefik', headers: { 'if-match': etag } }),
    412,
    'precondition_failed',
  );
  const deleted = await app.inject({
    method: 'DELETE',
    url: '/api/datasource/traefik',
    headers: { 'if-match': updated.headers.etag as string },
  });
  t.is(deleted.statusCode, 204);
});

test('bad input answers 4xx {id, message} and leaves datasources.yaml untouched', async (t) => {
  const app = await setup(t);
  const before = await readFile(fileOf(app));
  const cases: Array<{ url: string; payload?: unknown; raw?: string; status: number; id?: string }> = [
    { url: '/api/datasource/traefik', raw: '{"url": ', status: 400, id: 'invalid_json' },
    { url: '/api/datasource/traefik', payload: { poll_interval_s: 'often' }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { skip_tls_verify: 'maybe' }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { type: 'nginx' }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { basic_auth: 'user:pass' }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { basic_auth: { username: '' } }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: [1, 2], status: 422, id: 'validation_failed' },
    {
      url: '/api/datasource/traefik',
      payload: { url: 'http://traefik:8080/?x=1' },
      status: 422,
      id: 'validation_failed',
    },
    {
      url: '/api/datasource/traefik',
      payload: { url: 'http://traefik:8080/#top' },
      status: 422,
      id: 'validation_failed',
    },
    { url: '/api/datasource/traefik', payload: { url: 'ftp://traefik' }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { url: 'traefik:8080' }, status: 422, id: 'validation_failed' },
    {
      url: '/api/datasource/traefik',
      payload: { url: 'http://user:pw@traefik:8080' },
      status: 422,
      id: 'validation_failed',
    },
    { url: '/api/datasource/traefik', payload: { url: 'http://trae fik:8080' }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { poll_interval_s: 0 }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { poll_interval_s: 3601 }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { timeout_ms: 99 }, status: 422, id: 'validation_failed' },
    { url: '/api/datasource/traefik', payload: { timeout_ms: 1.5 }, status: 422, id: 'validation_failed' },
    {
      url: '/api/datasource/a%2Fb',
      payload: { type: 'traefik', url: 'http://x:1' },
      status: 422,
      id: 'validation_failed',
    },
    // a `..` segment (also encoded) is resolved before routing: it never becomes a name
    { url: '/api/datasource/..', payload: { type: 'traefik', url: 'http://x:1' }, status: 404, id: 'not_found' },
    { url: '/api/datasource/%2E%2E', payload: { type: 'traefik', url: 'http://x:1' }, status: 404, id: 'not_found' },
    {
      url: '/api/datasource/a..b',
      payload: { type: 'traefik', url: 'http://x:1' },
      status: 422,
      id: 'validation_failed',
    },
    { url: '/api/datasource/a%00b', payload: { type: 'traefik', url: 'http://x:1' }, status: 422 },
    {
      url: `/api/datasource/${'a'.repeat(100)}`,
      payload: { type: 'traefik', url: 'http://x:1' },
      status: 422,
      id: 'validation_failed',
    },
    {
      url: '/api/datasource/Upper',
      payload: { type: 'traefik', url: 'http://x:1' },
      status: 422,
      id: 'validation_failed',
    },
  ];
  for (const c of cases) {
    const response =
      c.raw === undefined
        ? await put(app, c.url, c.payload)
        : await app.inject({
            method: 'PUT',
            url: c.url,
            payload: c.raw,
            headers: { 'content-type': 'application/json' },
          });
    t.true(
      response.statusCode >= 400 && response.statusCode < 500,
      `${c.url} ${JSON.stringify(c.payload ?? c.raw)} → ${response.statusCode}`,
    );
    assertError(t, response, c.status, c.id);
  }
  const nested = await put(app, '/api/datasource/traefik', { url: 'http://traefik:8080?x=1' });
  t.deepEqual(nested.json().details, [{ path: '/url', message: 'must not contain a query' }]);
  assertError(
    t,
    await app.inject({
      method: 'PUT',
      url: '/api/datasource/traefik',
      payload: 'x',
      headers: { 'content-type': 'text/plain' },
    }),
    415,
    'unsupported_media_type',
  );
  assertError(
    t,
    await app.inject({ method: 'POST', url: '/api/datasource/traefik/test', payload: { timeout_ms: 5 } }),
    422,
    'validation_failed',
  );
  assertError(t, await app.inject({ method: 'DELETE', url: '/api/datasource/a%2Fb' }), 422, 'validation_failed');
  t.deepEqual(await readFile(fileOf(app)), before);
});

test.serial('POST /api/datasource/:name/test probes Pangolin and Traefik sources of the fake upstream', async (t) => {
  const app = await setup(t);
  const pangolin = await app.inject({ method: 'POST', url: '/api/datasource/pangolin/test' });
  t.is(pangolin.statusCode, 200);
  t.like(pangolin.json(), { ok: true, routers: PANGOLIN_ROUTERS, version: null, error: null });
  t.true(Number.isInteger(pangolin.json().latency_ms));
  const traefik = await app.inject({ method: 'POST', url: '/api/datasource/traefik/test', payload: {} });
  t.like(traefik.json(), { ok: true, routers: TRAEFIK_ROUTERS, version: TRAEFIK_VERSION, error: null });
  t.deepEqual(Object.keys(traefik.json()).sort(), ['error', 'latency_ms', 'ok', 'routers', 'version']);
});

test.serial('failed probes answer 200 with ok:false and an error naming the system', async (t) => {
  const { fake } = t.context;
  const app = await setup(t);
  const before = await readFile(fileOf(app));
  const probe = async (name: string, payload?: object) => {
    const response = await app.inject({
      method: 'POST',
      url: `/api/datasource/${name}/test`,
      ...(payload ? { payload } : {}),
    });
    t.is(response.statusCode, 200, response.body);
    return response.json() as {
      ok: boolean;
      error: string | null;
      routers: number | null;
      version: string | null;
      latency_ms: number;
    };
  };

  fake.state.fault = '500';
  const status = await probe('pangolin');
  t.false(status.ok);
  t.regex(status.error ?? '', /^Pangolin .*500/);
  t.is(status.routers, null);

  fake.state.fault = 'timeout';
  const timeout = await probe('traefik', { timeout_ms: 200 });
  t.false(timeout.ok);
  t.regex(timeout.error ?? '', /^Traefik .*200 ms \(timeout\)/);
  t.true(timeout.latency_ms >= 150);

  fake.state.fault = null;
  fake.state.basicAuth = { username: 'u', password: PASSWORD };
  const denied = await probe('traefik');
  t.false(denied.ok);
  t.regex(denied.error ?? '', /^Traefik answered HTTP 401.*basic_auth/);
  const allowed = await probe('traefik', { basic_auth: { username: 'u', password: PASSWORD } });
  t.true(allowed.ok, allowed.error ?? '');

  // the body was merged for the probe only
  t.deepEqual(await readFile(fileOf(app)), before);
});

test.serial('the test route answers 404 for an unknown name unless the body has type and url', async (t) => {
  const app = await setup(t);
  assertError(t, await app.inject({ method: 'POST', url: '/api/datasource/ghost/test' }), 404, 'not_found');
  assertError(
    t,
    await app.inject({ method: 'POST', url: '/api/datasource/ghost/test', payload: { type: 'traefik' } }),
    404,
    'not_found',
  );
  const adhoc = await app.inject({
    method: 'POST',
    url: '/api/datasource/ghost/test',
    payload: { type: 'pangolin', url: `${t.context.fake.pangolinUrl}/` },
  });
  t.like(adhoc.json(), { ok: true, routers: PANGOLIN_ROUTERS });
  t.false('ghost' in (await readStored(app)).sources);
});

test.serial('the deep health check probes the active source', async (t) => {
  const { fake } = t.context;
  const app = await setup(t);
  const healthy = await app.inject({ method: 'GET', url: '/api/health?deep=true' });
  t.is(healthy.json().checks.datasource.status, 'ok');
  fake.state.fault = '502';
  const failing = await app.inject({ method: 'GET', url: '/api/health?deep=true' });
  t.is(failing.statusCode, 503);
  t.is(failing.json().checks.datasource.status, 'fail');
  t.regex(failing.json().checks.datasource.error, /^Pangolin answered HTTP 502/);
});

test('onChange follows the active source only, including hand edits; an invalid hand edit keeps the last good file', async (t) => {
  const app = await setup(t);
  const changes: Array<ActiveDataSource | null> = [];
  app.datasources.onChange((active) => changes.push(active));

  await put(app, '/api/datasource/traefik', { timeout_ms: 1234 });
  t.is(changes.length, 0, 'an inactive source changing does not concern the poller');
  await put(app, '/api/datasource/pangolin', { poll_interval_s: 30 });
  t.is(changes.length, 1);
  t.is(changes[0]?.source.poll_interval_s, 30);

  const file = fileOf(app);
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace('poll_interval_s: 30', 'poll_interval_s: 90'));
  await waitFor(() => changes.length === 2, 3000);
  t.is(changes[1]?.source.poll_interval_s, 90);
  t.is(app.datasources.get('pangolin')?.poll_interval_s, 90);

  await writeFile(file, text.replace('poll_interval_s: 30', 'poll_interval_s: 0'));
  await waitFor(() => app.store.invalidFiles().some((f) => f.path === file), 3000);
  t.is(app.datasources.active()?.source.poll_interval_s, 90);
  t.is(changes.length, 2);

  // a hand edit of `active` switches the source for the poller too
  await writeFile(file, text.replace(/^active: pangolin$/m, 'active: traefik'));
  await waitFor(() => changes.length === 3, 3000);
  t.is(changes[2]?.name, 'traefik');
  t.is(changes[2]?.source.timeout_ms, 1234);
  t.deepEqual(app.store.invalidFiles(), []);
});

test('a hand edit may leave out defaults and timestamps; an unknown active source is reported as 404', async (t) => {
  const app = await setup(t);
  const changes: Array<ActiveDataSource | null> = [];
  app.datasources.onChange((active) => changes.push(active));
  await writeFile(fileOf(app), 'active: mine\nsources:\n  mine:\n    type: traefik\n    url: http://mine:8080/\n');
  await waitFor(() => changes.length === 1, 3000);
  t.deepEqual(changes[0], {
    name: 'mine',
    source: {
      type: 'traefik',
      url: 'http://mine:8080',
      skip_tls_verify: false,
      basic_auth: null,
      timeout_ms: 5000,
      poll_interval_s: 5,
    },
  });
  const view = (await app.inject({ method: 'GET', url: '/api/datasource/mine' })).json();
  t.like(view, { active: true, url: 'http://mine:8080' });
  t.is(view.created_at, view.updated_at);

  await writeFile(fileOf(app), 'active: gone\nsources:\n  mine:\n    type: traefik\n    url: http://mine:8080\n');
  await waitFor(() => changes.length === 2, 3000);
  t.is(changes[1], null);
  const active = await app.inject({ method: 'GET', url: '/api/datasource/active' });
  assertError(t, active, 404, 'not_found');
  t.regex(active.json().message, /gone/);
});

test('a 300-character name answers 4xx {id, message} and changes nothing', async (t) => {
  const app = await setup(t);
  const before = await readFile(fileOf(app));
  const response = await put(app, `/api/datasource/${'a'.repeat(300)}`, { type: 'traefik', url: 'http://x:1' });
  t.deepEqual(await readFile(fileOf(app)), before);
  t.true(response.statusCode >= 400 && response.statusCode < 500);
  assertError(t, response, response.statusCode);
});
