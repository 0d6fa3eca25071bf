import test from 'ava';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import type { FastifyInstance } from 'fastify';
import { SHARED } from '../helpers/shared.ts';
import { build, tempDir } from '../helpers/build.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { harness, writeSources, NEXTCLOUD, JELLYFIN } from '../resources/support.ts';
import { waitFor } from '../helpers/wait.ts';
import { parseLossless } from '../../model/lossless-json.ts';

const schema = JSON.parse(readFileSync(path.join(SHARED, 'schemas', 'traefik-v3-file-provider.json'), 'utf8'));
const validate = new Ajv({ allErrors: true }).compile(schema);
/** Ajv needs plain numbers: MaxInt64 priorities are compared as their nearest double. */
const forAjv = (text: string) => JSON.parse(text);

const post = (app: FastifyInstance, url: string, payload?: unknown) =>
  app.inject({ method: 'POST', url, payload: payload as object });
const put = (app: FastifyInstance, url: string, payload: unknown) =>
  app.inject({ method: 'PUT', url, payload: payload as object });

/** Our objects on top of the fixture stack: one of each kind of override on Nextcloud and Jellyfin. */
async function applyOverrides(t: Parameters<typeof harness>[0], app: FastifyInstance): Promise<void> {
  const ok = (res: { statusCode: number; body: string }, what: string) =>
    t.true(res.statusCode < 300, `${what}: ${res.statusCode} ${res.body}`);
  ok(
    await post(app, '/api/middlewares', {
      id: 'authelia',
      name: 'Authelia',
      type: 'forwardAuth',
      config: {
        address: 'http://authelia:9091/api/authz/forward-auth',
        trustForwardHeader: true,
        authResponseHeaders: ['Remote-User'],
      },
    }),
    'middleware',
  );
  ok(
    await post(app, '/api/middlewares', {
      id: 'rate-limit',
      name: 'Rate limit',
      type: 'rateLimit',
      config: { average: 100, burst: 50 },
    }),
    'middleware',
  );
  ok(
    await post(app, '/api/services', {
      id: 'cloud-v2',
      name: 'Cloud v2',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://127.0.0.1:8080' }] },
    }),
    'service',
  );
  ok(
    await post(app, `/api/resources/${NEXTCLOUD}/middlewares`, { middleware_id: 'authelia', priority: 200 }),
    'assign',
  );
  ok(
    await post(app, `/api/resources/${NEXTCLOUD}/middlewares`, { middleware_id: 'rate-limit', priority: 100 }),
    'assign',
  );
  ok(
    await post(app, `/api/resources/${NEXTCLOUD}/external-middlewares`, { name: 'crowdsec@file', priority: 150 }),
    'external',
  );
  ok(await post(app, `/api/resources/${NEXTCLOUD}/service`, { service_id: 'cloud-v2' }), 'service assign');
  ok(
    await put(app, `/api/resources/${NEXTCLOUD}/config/headers`, {
      request: { 'X-Forwarded-Proto': 'https' },
      response: { 'X-Frame-Options': 'DENY' },
    }),
    'headers',
  );
  ok(await put(app, `/api/resources/${NEXTCLOUD}/config/priority`, { priority: 500 }), 'priority');
  ok(await put(app, `/api/resources/${JELLYFIN}/config/http`, { entrypoints: ['websecure', 'web'] }), 'entrypoints');
  ok(
    await put(app, `/api/resources/${JELLYFIN}/config/tls`, {
      cert_resolver: 'other',
      domains: [{ main: 'media.example.com', sans: ['*.media.example.com'] }],
      options: null,
    }),
    'tls',
  );
  ok(await put(app, `/api/resources/${JELLYFIN}/config/tcp`, { enabled: true, entrypoints: ['tcp-443'] }), 'tcp');
}

test('the fixture stack plus our overrides gives a schema-valid config with every override applied', async (t) => {
  const { app } = await harness(t);
  await applyOverrides(t, app);
  await app.proxyConfig.regenerate();
  const res = await app.inject({ url: '/api/proxy-config' });
  t.is(res.statusCode, 200);
  t.true(validate(forAjv(res.body)), JSON.stringify(validate.errors));
  const config = parseLossless(res.body) as any;
  const nextcloud = config.http.routers['1-Nextcloud-router'];
  t.deepEqual(nextcloud.middlewares, [`${NEXTCLOUD}_headers`, 'authelia', 'crowdsec@file', 'rate-limit', 'badger']);
  t.is(nextcloud.service, 'cloud-v2');
  t.is(nextcloud.priority, 500);
  t.deepEqual(config.http.middlewares[`${NEXTCLOUD}_headers`], {
    headers: {
      customRequestHeaders: { 'X-Forwarded-Proto': 'https' },
      customResponseHeaders: { 'X-Frame-Options': 'DENY' },
    },
  });
  t.deepEqual(config.http.services['cloud-v2'], { loadBalancer: { servers: [{ url: 'http://127.0.0.1:8080' }] } });
  const jellyfin = config.http.routers['6-Jellyfin-Media-router'];
  t.deepEqual(jellyfin.entryPoints, ['websecure', 'web']);
  t.deepEqual(jellyfin.tls, {
    certResolver: 'other',
    domains: [{ main: 'media.example.com', sans: ['*.media.example.com'] }],
  });
  const tcp = config.tcp.routers[`${JELLYFIN}_tcp`];
  t.deepEqual(tcp.entryPoints, ['tcp-443']);
  t.is(tcp.rule, 'HostSNI(`media.example.com`)');
  t.deepEqual(config.tcp.services[`${JELLYFIN}_tcp`], {
    loadBalancer: { servers: [{ address: '100.89.128.16:52390' }] },
  });
  // untouched upstream parts pass through: the UDP section and the redirect routers
  t.truthy(config.udp.routers['7-Bedrock-router']);
  t.deepEqual(config.http.routers['1-Nextcloud-router-redirect'].middlewares, ['redirect-to-https']);
  // the resource reports what was emitted
  const resource = (await app.inject({ url: `/api/resources/${NEXTCLOUD}` })).json();
  t.deepEqual(resource.effective_middlewares, nextcloud.middlewares);
  t.is(resource.effective_service, 'cloud-v2');
  t.true(resource.emitted);
  const status = (await app.inject({ url: '/api/proxy-config/status' })).json();
  t.is(status.counts.patched_routers, 2);
  t.deepEqual(status.schema_warnings, []);
});

test('the same inputs give byte-identical bodies and ETags; JSON is compact with one newline', async (t) => {
  const { app } = await harness(t);
  await applyOverrides(t, app);
  await app.proxyConfig.regenerate();
  const first = await app.inject({ url: '/api/proxy-config' });
  const invalidated = (await post(app, '/api/proxy-config/invalidate')).json();
  t.false(invalidated.changed);
  t.is(`"${invalidated.etag}"`, String(first.headers.etag));
  const second = await app.inject({ url: '/api/proxy-config' });
  t.is(second.body, first.body);
  t.true(first.body.endsWith('}\n'));
  t.false(first.body.slice(0, -1).includes('\n'));
  t.regex(String(first.headers.etag), /^"[0-9a-f]{32}"$/);
  t.is(first.headers['cache-control'], 'no-cache');
  t.regex(String(first.headers['x-config-generated-at']), /^\d{4}-\d\d-\d\dT/);
});

test('If-None-Match answers 304; gzip, YAML and HEAD are served from the same generation', async (t) => {
  const { app } = await harness(t);
  await app.proxyConfig.regenerate();
  const plain = await app.inject({ url: '/api/proxy-config' });
  const etag = String(plain.headers.etag);
  t.is((await app.inject({ url: '/api/proxy-config', headers: { 'if-none-match': etag } })).statusCode, 304);
  t.is((await app.inject({ url: '/api/proxy-config', headers: { 'if-none-match': '"other"' } })).statusCode, 200);
  await waitFor(() => app.proxyConfig.current()?.json.gzip, 2000); // compressed once, on the thread pool
  const gz = await app.inject({ url: '/api/proxy-config', headers: { 'accept-encoding': 'gzip, deflate' } });
  t.is(gz.headers['content-encoding'], 'gzip');
  t.is(gunzipSync(gz.rawPayload).toString(), plain.body);
  t.true(gz.rawPayload.length < plain.rawPayload.length);
  t.is(
    (await app.inject({ url: '/api/proxy-config', headers: { 'accept-encoding': 'gzip;q=0' } })).headers[
      'content-encoding'
    ],
    undefined,
  );
  for (const request of [
    { url: '/api/proxy-config?format=yaml' },
    { url: '/api/proxy-config', headers: { accept: 'application/yaml' } },
  ]) {
    const yaml = await app.inject(request);
    t.regex(String(yaml.headers['content-type']), /^application\/yaml/);
    t.deepEqual(parseYaml(yaml.body), JSON.parse(plain.body)); // the fixture has no integer above 2^53
    t.not(yaml.headers.etag, etag);
  }
  const head = await app.inject({ method: 'HEAD', url: '/api/proxy-config' });
  t.is(head.statusCode, 200);
  t.is(head.headers.etag, etag);
  t.is((await app.inject({ url: '/api/proxy-config?format=xml' })).statusCode, 422);
});

test('the provider is also served at /api/v1/proxy-config and /api/v1/traefik-config', async (t) => {
  const { app } = await harness(t);
  await app.proxyConfig.regenerate();
  const main = await app.inject({ url: '/api/proxy-config' });
  for (const prefix of ['/api/v1/proxy-config', '/api/v1/traefik-config']) {
    const alias = await app.inject({ url: prefix });
    t.is(alias.body, main.body, prefix);
    t.is((await app.inject({ url: `${prefix}/status` })).statusCode, 200);
    t.is((await post(app, `${prefix}/invalidate`)).statusCode, 200);
  }
});

test('a failing upstream keeps the last good config with X-Config-Stale, for 500, timeout and reset', async (t) => {
  const { app, fake } = await harness(t, { timeoutMs: 1500 });
  await app.proxyConfig.regenerate();
  const good = await app.inject({ url: '/api/proxy-config' });
  for (const fault of ['500', 'timeout', 'reset', 'malformed', 'array'] as const) {
    fake.state.fault = fault;
    const result = (await post(app, '/api/proxy-config/invalidate')).json();
    t.true(result.stale, fault);
    t.regex(result.upstream_error, /Pangolin/, fault);
    t.false(result.changed, fault);
    const served = await app.inject({ url: '/api/proxy-config' });
    t.is(served.statusCode, 200, fault);
    t.is(served.body, good.body, fault);
    t.is(served.headers['x-config-stale'], 'true', fault);
    const status = (await app.inject({ url: '/api/proxy-config/status' })).json();
    t.is(status.status, 'degraded');
    t.true(status.stale);
  }
  fake.state.fault = null;
  // the short timeout was for the hang; the recovery must not depend on how busy the machine is
  t.is((await put(app, '/api/datasource/pangolin', { timeout_ms: 60_000 })).statusCode, 200);
  const recovered = (await post(app, '/api/proxy-config/invalidate')).json();
  t.false(recovered.stale);
  t.is((await app.inject({ url: '/api/proxy-config' })).headers['x-config-stale'], undefined);
});

test('an empty upstream after a non-empty one is used only after the confirmations', async (t) => {
  const { app, fake } = await harness(t, {
    config: { discovery: { empty_confirmations: 3, exclude: ['*-redirect'] } },
  });
  await app.proxyConfig.regenerate();
  const good = await app.inject({ url: '/api/proxy-config' });
  fake.state.pangolinFile = 'traefik-config-empty.json';
  for (let i = 1; i <= 2; i++) {
    await post(app, '/api/proxy-config/invalidate');
    t.is((await app.inject({ url: '/api/proxy-config' })).body, good.body, `empty answer ${i} is not served`);
  }
  await post(app, '/api/proxy-config/invalidate');
  const emptied = parseLossless((await app.inject({ url: '/api/proxy-config' })).body) as any;
  t.is(emptied.http?.routers, undefined, 'the third empty answer is confirmed');
});

test('a hand-edited middleware file is served with a new ETag (within a second on an idle machine); an invalid one is reported', async (t) => {
  const { app, dataDir } = await harness(t);
  await app.proxyConfig.regenerate();
  const before = String((await app.inject({ url: '/api/proxy-config' })).headers.etag);
  const start = performance.now();
  await writeFile(path.join(dataDir, 'middlewares', 'gzip.yaml'), 'name: Compress\ntype: compress\nconfig: {}\n');
  await waitFor(async () => (await app.inject({ url: '/api/proxy-config' })).headers.etag !== before, 1000);
  t.log(`edit to served: ${(performance.now() - start).toFixed(0)} ms`);
  const config = parseLossless((await app.inject({ url: '/api/proxy-config' })).body) as any;
  t.deepEqual(config.http.middlewares.gzip, { compress: {} });
  await writeFile(
    path.join(dataDir, 'middlewares', 'broken.yaml'),
    'name: Broken\ntype: rateLimit\nconfig:\n  avrage: 10\n',
  );
  const status = await waitFor(async () => {
    const body = (await app.inject({ url: '/api/proxy-config/status' })).json();
    return body.invalid_files.length > 0 ? body : null;
  }, 2000);
  t.is(status.status, 'degraded');
  t.is(status.invalid_files[0].path, path.join('middlewares', 'broken.yaml'));
  t.is(status.invalid_files[0].line, 4);
});

test('before any config exists GET answers 502 and status 503; it is never non-200 afterwards', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  fake.state.fault = '500';
  const dataDir = path.join(await tempDir(t), 'data');
  await writeSources(dataDir, fake); // the fault answers at once: no short timeout to race a busy machine
  const app = await build(t, { dataDir, config: { auth: { mode: 'off' }, templates: { seed: false } } });
  await app.resources.started();
  const missing = await app.inject({ url: '/api/proxy-config' });
  t.is(missing.statusCode, 502);
  t.is(missing.json().id, 'upstream_unavailable');
  const status = await app.inject({ url: '/api/proxy-config/status' });
  t.is(status.statusCode, 503);
  t.is(status.json().id, 'unhealthy');
  t.is(status.json().status, 'error');
  t.is((await post(app, '/api/proxy-config/invalidate')).statusCode, 502);
  fake.state.fault = null;
  t.is((await post(app, '/api/proxy-config/invalidate')).statusCode, 200);
  fake.state.fault = '500';
  await post(app, '/api/proxy-config/invalidate');
  t.is((await app.inject({ url: '/api/proxy-config' })).statusCode, 200);
});

test('the last good upstream is cached on disk and served (stale) after a restart with the upstream down', async (t) => {
  const { app, fake, dataDir } = await harness(t);
  await app.proxyConfig.regenerate();
  const good = await app.inject({ url: '/api/proxy-config' });
  await app.close();
  fake.state.fault = '502';
  const again = await build(t, { dataDir, config: { auth: { mode: 'off' }, templates: { seed: false } } });
  await again.resources.started();
  await again.proxyConfig.regenerate();
  const served = await again.inject({ url: '/api/proxy-config' });
  t.is(served.statusCode, 200);
  t.is(served.body, good.body);
  t.is(served.headers['x-config-stale'], 'true');
});

test('provider.token: reads need it (or any API token); without it they are open', async (t) => {
  const { app } = await harness(t, { config: { auth: { mode: 'ops' }, provider: { token: 'traefik-secret' } } });
  await app.proxyConfig.regenerate();
  const denied = await app.inject({ url: '/api/v1/proxy-config' });
  t.is(denied.statusCode, 401);
  t.is(denied.json().id, 'auth_failed');
  t.is(
    (await app.inject({ url: '/api/v1/proxy-config', headers: { authorization: 'Bearer traefik-secret' } })).statusCode,
    200,
  );
});
