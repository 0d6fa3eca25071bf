import anyTest, { type TestFn } from 'ava';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import forge from 'node-forge';
import {
  fetchPangolinConfig,
  fetchTraefikList,
  fetchTraefikRouters,
  fetchTraefikServices,
  probeSource,
  type UpstreamSource,
} from '../../plugins/datasource/upstream-client.ts';
import { startFakeUpstream, useFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { fixture } from '../helpers/shared.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ fake: FakeUpstream }>;
const PASSWORD = 'pa55-w0rd-never-shown';
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

function pangolin(fake: FakeUpstream, overrides: Partial<UpstreamSource> = {}): UpstreamSource {
  return {
    type: 'pangolin',
    url: fake.pangolinUrl,
    skip_tls_verify: false,
    basic_auth: null,
    timeout_ms: 5000,
    ...overrides,
  };
}
function traefik(fake: FakeUpstream, overrides: Partial<UpstreamSource> = {}): UpstreamSource {
  return { type: 'traefik', url: fake.url, skip_tls_verify: false, basic_auth: null, timeout_ms: 5000, ...overrides };
}

useFakeUpstream(test);
test.beforeEach((t) => {
  t.context.fake.requests.length = 0;
});

test.serial('fetchPangolinConfig returns the body, its text and the SHA-256 of the raw bytes', async (t) => {
  const { fake } = t.context;
  const result = await fetchPangolinConfig(pangolin(fake));
  if (!result.ok) return t.fail(result.error);
  const text = readFileSync(fixture('pangolin', 'traefik-config.json'), 'utf8');
  t.is(result.text, text);
  t.is(result.hash, createHash('sha256').update(text).digest('hex'));
  t.deepEqual(Object.keys(result.body), ['http', 'tcp', 'udp']);
  t.true(result.latency_ms >= 0);
  t.is(fake.requests.length, 1);
  t.is(fake.requests[0].url, '/api/v1/traefik-config');
  t.is(fake.requests[0].headers['user-agent'], `stack-manager/${pkg.version}`);
  t.is(fake.requests[0].headers.authorization, undefined);
});

test.serial('a trailing slash on the source URL is ignored', async (t) => {
  const result = await fetchPangolinConfig(pangolin(t.context.fake, { url: `${t.context.fake.pangolinUrl}/` }));
  t.true(result.ok);
  t.is(t.context.fake.requests[0].url, '/api/v1/traefik-config');
});

test.serial('{} from Pangolin is a valid empty config', async (t) => {
  t.context.fake.state.pangolinFile = 'traefik-config-empty.json';
  const result = await fetchPangolinConfig(pangolin(t.context.fake));
  if (!result.ok) return t.fail(result.error);
  t.deepEqual(result.body, {});
});

for (const status of ['500', '502', '404'] as const) {
  test.serial(`HTTP ${status} from Pangolin is a failure naming Pangolin and the status`, async (t) => {
    t.context.fake.state.fault = status;
    const result = await fetchPangolinConfig(pangolin(t.context.fake));
    if (result.ok) return t.fail('expected a failure');
    t.regex(result.error, new RegExp(`^Pangolin answered HTTP ${status}`));
    t.true(result.error.includes('/api/v1/traefik-config'));
  });
}

test.serial('a Pangolin that never answers times out after timeout_ms', async (t) => {
  t.context.fake.state.fault = 'timeout';
  const result = await fetchPangolinConfig(pangolin(t.context.fake, { timeout_ms: 150 }));
  if (result.ok) return t.fail('expected a failure');
  t.regex(result.error, /^Pangolin did not answer within 150 ms \(timeout\)/);
  // the message proves the client's own timer ended the wait (the fake never answers); no wall-clock bound: the machine may be busy
  t.true(result.latency_ms >= 100);
});

test.serial('a connection reset is a failure naming Pangolin', async (t) => {
  t.context.fake.state.fault = 'reset';
  const result = await fetchPangolinConfig(pangolin(t.context.fake));
  if (result.ok) return t.fail('expected a failure');
  t.regex(result.error, /^Pangolin closed the connection before answering/);
});

test.serial('a refused connection is a failure naming Pangolin', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const result = await fetchPangolinConfig(pangolin(t.context.fake, { url: `http://127.0.0.1:${port}/api/v1` }));
  if (result.ok) return t.fail('expected a failure');
  t.regex(result.error, /^Pangolin refused the connection/);
});

const badBodies = [
  ['malformed', 'malformed JSON', /^Pangolin sent invalid JSON/],
  ['array', 'JSON array', /^Pangolin sent a JSON array .*expected a JSON object/],
  ['empty', 'zero-length', /^Pangolin sent an empty body/],
] as const;
for (const [fault, label, expected] of badBodies) {
  test.serial(`a 200 with a ${label} body is a Pangolin failure`, async (t) => {
    t.context.fake.state.fault = fault;
    const result = await fetchPangolinConfig(pangolin(t.context.fake));
    if (result.ok) return t.fail('expected a failure');
    t.regex(result.error, expected);
  });
}

test.serial('basic auth: credentials are sent, 401 without them, the password never shows', async (t) => {
  const { fake } = t.context;
  fake.state.basicAuth = { username: 'admin', password: PASSWORD };
  const missing = await fetchPangolinConfig(pangolin(fake));
  if (missing.ok) return t.fail('expected a failure');
  t.regex(missing.error, /^Pangolin answered HTTP 401 .*\(check basic_auth\)/);

  const wrong = await fetchPangolinConfig(
    pangolin(fake, { basic_auth: { username: 'admin', password: `${PASSWORD}-old` } }),
  );
  if (wrong.ok) return t.fail('expected a failure');
  t.false(wrong.error.includes(PASSWORD));

  const good = await fetchPangolinConfig(pangolin(fake, { basic_auth: { username: 'admin', password: PASSWORD } }));
  t.true(good.ok);
  t.is(fake.requests.at(-1)?.headers.authorization, `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`);
  // user info in the URL serves as credentials when basic_auth is not set
  const inUrl = await fetchPangolinConfig(
    pangolin(fake, { url: fake.pangolinUrl.replace('http://', `http://admin:${PASSWORD}@`) }),
  );
  t.true(inUrl.ok);
});

test.serial('no failure message ever contains the password', async (t) => {
  const { fake } = t.context;
  const auth = { username: 'admin', password: PASSWORD };
  // ('array' is not a fault for Traefik lists: [] is an empty list)
  for (const fault of ['500', 'reset', 'malformed', 'empty', 'timeout'] as const) {
    fake.state.fault = fault;
    for (const result of [
      await fetchPangolinConfig(pangolin(fake, { basic_auth: auth, timeout_ms: 150 })),
      await fetchTraefikRouters(traefik(fake, { basic_auth: auth, timeout_ms: 150 })),
    ]) {
      if (result.ok) return t.fail(`fault ${fault} gave ok`);
      t.false(result.error.includes(PASSWORD), result.error);
    }
    const probe = await probeSource(traefik(fake, { basic_auth: auth, timeout_ms: 150 }));
    t.false(probe.ok);
    t.false(probe.error!.includes(PASSWORD));
  }
  // user info in the URL is not echoed either
  fake.state.fault = '500';
  const inUrl = await fetchPangolinConfig(
    pangolin(fake, { url: fake.pangolinUrl.replace('http://', `http://admin:${PASSWORD}@`) }),
  );
  t.false(inUrl.ok);
  if (!inUrl.ok) t.false(inUrl.error.includes(PASSWORD), inUrl.error);
});

test.serial('a caller abort ends the call with a failure', async (t) => {
  t.context.fake.state.fault = 'timeout';
  const controller = new AbortController();
  const pending = fetchPangolinConfig(pangolin(t.context.fake), { signal: controller.signal });
  // aborted while the upstream holds the request (not before it is sent: a request still on its
  // way would reach the fake during the next test)
  await waitFor(() => t.context.fake.requests.length > 0, 1000);
  controller.abort();
  const result = await pending;
  if (result.ok) return t.fail('expected a failure');
  t.regex(result.error, /^Pangolin request aborted/);
});

test.serial('fetchTraefikRouters keeps MaxInt64 priorities exact', async (t) => {
  const result = await fetchTraefikRouters(traefik(t.context.fake));
  if (!result.ok) return t.fail(result.error);
  t.is(result.items.length, 15);
  const byName = new Map(result.items.map((item) => [item.name, item]));
  t.is(byName.get('acme-http@internal')?.priority, 9223372036854775807n);
  t.is(byName.get('api@internal')?.priority, 9223372036854775806n);
  t.is(byName.get('dashboard@internal')?.priority, 9223372036854775805n);
  t.is(byName.get('1-Nextcloud-router@http')?.priority, 100);
  t.is(t.context.fake.requests[0].url, '/api/http/routers?per_page=1000&page=1');
});

test.serial('Traefik lists follow X-Next-Page across pages', async (t) => {
  const { fake } = t.context;
  const whole = await fetchTraefikRouters(traefik(fake));
  fake.state.pageSize = 4;
  fake.requests.length = 0;
  const paged = await fetchTraefikRouters(traefik(fake));
  if (!whole.ok || !paged.ok) return t.fail('expected success');
  t.deepEqual(
    fake.requests.map((request) => request.url),
    [1, 2, 3, 4].map((page) => `/api/http/routers?per_page=1000&page=${page}`),
  );
  t.deepEqual(
    paged.items.map((item) => item.name),
    whole.items.map((item) => item.name),
  );
  t.is(paged.items.find((item) => item.name === 'ping@internal')?.priority, 9223372036854775807n);
});

test.serial('a failing page fails the whole list', async (t) => {
  const { fake } = t.context;
  fake.state.pageSize = 4;
  fake.state.fault = '502';
  fake.state.faultPath = '/api/http/routers';
  const result = await fetchTraefikList(traefik(fake), '/api/http/routers');
  if (result.ok) return t.fail('expected a failure');
  t.regex(result.error, /^Traefik answered HTTP 502/);
});

test.serial('fetchTraefikServices returns the HTTP, TCP and UDP lists', async (t) => {
  const result = await fetchTraefikServices(traefik(t.context.fake));
  if (!result.ok) return t.fail(result.error);
  t.deepEqual([result.http.length, result.tcp.length, result.udp.length], [11, 2, 1]);
});

test.serial('probe of a Pangolin source counts http.routers', async (t) => {
  const probe = await probeSource(pangolin(t.context.fake));
  t.like(probe, { ok: true, routers: 7, version: null, error: null });
  t.is(typeof probe.latency_ms, 'number');
  t.context.fake.state.pangolinFile = 'traefik-config-empty.json';
  t.like(await probeSource(pangolin(t.context.fake)), { ok: true, routers: 0 });
});

test.serial('probe of a Traefik source reads the version and counts routers', async (t) => {
  const probe = await probeSource(traefik(t.context.fake));
  t.deepEqual({ ...probe, latency_ms: 0 }, { ok: true, latency_ms: 0, routers: 15, version: '3.6.24', error: null });
  t.deepEqual(t.context.fake.requests.map((request) => request.url.split('?')[0]).sort(), [
    '/api/http/routers',
    '/api/version',
  ]);
});

test.serial('probe of a Traefik source whose /api/version fails: ok, the routers counted, no version', async (t) => {
  const { fake } = t.context;
  fake.state.fault = '404';
  fake.state.faultPath = '/api/version';
  t.deepEqual(
    { ...(await probeSource(traefik(fake))), latency_ms: 0 },
    {
      ok: true,
      latency_ms: 0,
      routers: 15,
      version: null,
      error: null,
    },
  );
});

test.serial('probe failures give ok:false with the reason', async (t) => {
  const { fake } = t.context;
  fake.state.fault = '500';
  fake.state.faultPath = '/api/http/routers';
  const traefikProbe = await probeSource(traefik(fake));
  t.like(traefikProbe, { ok: false, routers: null, version: null });
  t.regex(traefikProbe.error!, /^Traefik answered HTTP 500/);
  fake.state.faultPath = null;
  fake.state.fault = 'array';
  const pangolinProbe = await probeSource(pangolin(fake));
  t.like(pangolinProbe, { ok: false, routers: null, version: null });
  t.regex(pangolinProbe.error!, /^Pangolin sent a JSON array/);
});

function selfSignedCertificate(): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const subject = [{ name: 'commonName', value: '127.0.0.1' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }]);
  cert.sign(forge.pki.privateKeyFromPem(key), forge.md.sha256.create());
  return { key, cert: forge.pki.certificateToPem(cert) };
}

test.serial('a self-signed certificate is a TLS error unless skip_tls_verify', async (t) => {
  const secure = await startFakeUpstream({ https: selfSignedCertificate() });
  t.teardown(() => secure.close());
  const strict = await fetchPangolinConfig(pangolin(secure));
  if (strict.ok) return t.fail('expected a failure');
  t.regex(strict.error, /^Pangolin TLS error .*skip_tls_verify/);
  const relaxed = await fetchPangolinConfig(pangolin(secure, { skip_tls_verify: true }));
  t.true(relaxed.ok, relaxed.ok ? '' : relaxed.error);
});

test.serial('the fake answers single objects and unknown names like Traefik', async (t) => {
  const { fake } = t.context;
  const found = await fetch(`${fake.url}/api/http/routers/${encodeURIComponent('api@internal')}`);
  t.is(found.status, 200);
  t.true((await found.text()).includes('"priority":9223372036854775806'));
  const missing = await fetch(`${fake.url}/api/http/routers/x%40file`);
  t.is(missing.status, 404);
  t.deepEqual(await missing.json(), { message: 'router not found: x@file' });
  const services = await fetch(`${fake.url}/api/tcp/services`);
  t.is(services.headers.get('x-next-page'), '1');
  t.is(await services.text(), readFileSync(fixture('traefik-api', 'tcp-services.json'), 'utf8'));
  for (const path of ['/api/overview', '/api/rawdata', '/api/entrypoints/web', '/api/udp/routers']) {
    t.is((await fetch(`${fake.url}${path}`)).status, 200, path);
  }
});
