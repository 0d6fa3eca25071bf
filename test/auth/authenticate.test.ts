/** Token checks of API.md §2.3: first start, expiry, malformed headers, WebSocket access_token, provider.token, last_used_at. */
import { createHash } from 'node:crypto';
import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { bearer, buildWithProbes, initialAdminToken, logCapture, tokensByRole } from './support.ts';

const TOKEN_FORMAT = /^smk_[A-Za-z0-9_-]{43}$/;

/** Resolves on the next API write of tokens.yaml (last_used_at updates run in the background). */
function nextTokenWrite(app: FastifyInstance): Promise<void> {
  return new Promise((resolve) => {
    const off = app.store.onAnyChange((event) => {
      if (event.collection === 'auth/tokens.yaml' && event.source === 'api') {
        off();
        resolve();
      }
    });
  });
}

test('first start in ops mode creates initial-admin, writes it 0600 in a 0700 dir and logs only the path', async (t) => {
  const logs = logCapture();
  const app = await build(t, { logger: { level: 'info', stream: logs.stream } });
  const file = path.join(app.store.dataDir, 'auth', 'initial-admin-token');
  const token = await initialAdminToken(app);
  t.regex(token, TOKEN_FORMAT);
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is((await stat(path.join(app.store.dataDir, 'auth', 'tokens.yaml'))).mode & 0o777, 0o600);
  t.is((await stat(path.join(app.store.dataDir, 'auth'))).mode & 0o777, 0o700);
  t.true(
    logs.lines().some((line) => line.file === file),
    'the file path is logged',
  );
  t.false(logs.text().includes(token), 'the token never reaches the log');
  t.deepEqual(
    app.auth.list().map((info) => [info.name, info.role]),
    [['initial-admin', 'admin']],
  );
  const whoami = await app.inject({ url: '/api/auth/whoami', headers: bearer(token) });
  t.deepEqual(whoami.json(), { name: 'initial-admin', role: 'admin', auth_mode: 'ops' });
});

test('the stored file holds the SHA-256 hex of a token, never the token', async (t) => {
  const app = await build(t);
  const token = await initialAdminToken(app);
  const stored = await readFile(path.join(app.store.dataDir, 'auth', 'tokens.yaml'), 'utf8');
  t.true(stored.includes(createHash('sha256').update(token).digest('hex')));
  t.false(stored.includes(token));
});

test('no initial admin token in mode off, and none on a restart that already has tokens', async (t) => {
  const off = await build(t, { config: { auth: { mode: 'off' } } });
  t.deepEqual(off.auth.list(), []);
  t.is(await off.store.readRaw('auth/initial-admin-token'), undefined);

  const dataDir = path.join(await tempDir(t), 'data');
  const first = await build(t, { dataDir });
  const token = await initialAdminToken(first);
  await first.close();
  const second = await build(t, { dataDir });
  t.is(await initialAdminToken(second), token, 'the file is not rewritten');
  t.is(second.auth.list().length, 1);
});

test('a broken hand-edited tokens.yaml is not overwritten by a new initial admin token', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(path.join(dataDir, 'auth'), { recursive: true });
  await writeFile(path.join(dataDir, 'auth', 'tokens.yaml'), '- name: [broken\n');
  const app = await build(t, { dataDir });
  t.is(await app.store.readRaw('auth/initial-admin-token'), undefined);
  t.is(await readFile(path.join(dataDir, 'auth', 'tokens.yaml'), 'utf8'), '- name: [broken\n');
});

test('an expired token is rejected with 401', async (t) => {
  let clock = new Date('2030-01-01T00:00:00.000Z');
  const app = await build(t, { now: () => clock });
  const admin = await initialAdminToken(app);
  const created = await app.inject({
    method: 'POST',
    url: '/api/auth/tokens',
    headers: bearer(admin),
    payload: { name: 'short', role: 'viewer', expires_in_days: 1 },
  });
  t.is(created.json().expires_at, '2030-01-02T00:00:00.000Z');
  const token = created.json().token as string;
  t.is((await app.inject({ url: '/api/auth/whoami', headers: bearer(token) })).statusCode, 200);
  clock = new Date('2030-01-02T00:00:00.000Z');
  const expired = await app.inject({ url: '/api/auth/whoami', headers: bearer(token) });
  t.is(expired.statusCode, 401);
  t.is(expired.json().id, 'auth_failed');
  t.is(expired.headers['www-authenticate'], 'Bearer realm="stack-manager"');
});

test('malformed, unknown and missing credentials answer 401 auth_failed with WWW-Authenticate', async (t) => {
  const app = await build(t);
  const admin = await initialAdminToken(app);
  const cases: Record<string, string>[] = [
    {},
    { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    { authorization: 'Bearer' },
    { authorization: `Bearer ${admin} extra` },
    { authorization: `Token ${admin}` },
    { authorization: `Bearer ${admin.slice(0, -1)}` },
    { authorization: `Bearer smk_${'A'.repeat(43)}` },
  ];
  for (const headers of cases) {
    const response = await app.inject({ url: '/api/auth/whoami', headers });
    t.is(response.statusCode, 401, JSON.stringify(headers));
    t.is(response.json().id, 'auth_failed');
    t.is(response.headers['www-authenticate'], 'Bearer realm="stack-manager"');
  }
  t.is(
    (await app.inject({ url: '/api/auth/whoami', headers: { authorization: `bearer  ${admin}` } })).statusCode,
    200,
    'scheme is case-insensitive',
  );
});

test('?access_token= is accepted on WebSocket handshakes only and redacted in logs', async (t) => {
  const logs = logCapture();
  // buildApp's own logger settings (serializers, redaction), only the destination is captured
  const app = await build(t, { logStream: logs.stream, config: { log: { level: 'info' } } });
  const admin = await initialAdminToken(app);
  const url = `/api/auth/whoami?access_token=${admin}`;
  const upgrade = { upgrade: 'websocket', connection: 'Upgrade' };
  t.is((await app.inject({ url, headers: upgrade })).statusCode, 200);
  t.is((await app.inject({ url })).statusCode, 401, 'plain GET: the query value is ignored');
  t.is((await app.inject({ url: '/api/auth/whoami?access_token=', headers: upgrade })).statusCode, 401);
  t.false(logs.text().includes(admin), 'no token in any log line');
  t.true(logs.text().includes('access_token=***'));
});

test('provider routes are open while provider.token is unset, in every mode', async (t) => {
  for (const mode of ['off', 'ops', 'all']) {
    const app = await buildWithProbes(t, { config: { auth: { mode } } });
    t.is((await app.inject({ url: '/api/test/provider' })).statusCode, 200, mode);
    t.is(
      (await app.inject({ url: '/api/test/provider', headers: bearer('whatever') })).statusCode,
      200,
      `${mode}: header ignored`,
    );
  }
});

test('with provider.token set, provider reads need it or any valid API token', async (t) => {
  for (const mode of ['off', 'ops', 'all']) {
    const app = await buildWithProbes(t, { config: { auth: { mode }, provider: { token: 'traefik-secret' } } });
    const tokens = await tokensByRole(app);
    const missing = await app.inject({ url: '/api/test/provider' });
    t.is(missing.statusCode, 401, mode);
    t.is(missing.headers['www-authenticate'], 'Bearer realm="stack-manager"');
    t.is((await app.inject({ url: '/api/test/provider', headers: bearer('traefik-wrong') })).statusCode, 401, mode);
    t.is((await app.inject({ url: '/api/test/provider', headers: bearer('traefik-secret') })).statusCode, 200, mode);
    t.is((await app.inject({ url: '/api/test/provider', headers: bearer(tokens.viewer) })).statusCode, 200, mode);
    // provider.token opens only provider reads, not other routes
    if (mode !== 'off')
      t.is((await app.inject({ url: '/api/auth/whoami', headers: bearer('traefik-secret') })).statusCode, 401, mode);
  }
});

test('last_used_at is recorded, and rewritten at most once a minute', async (t) => {
  let clock = new Date('2030-01-01T00:00:00.000Z');
  const app = await build(t, { now: () => clock });
  const admin = await initialAdminToken(app);
  let writes = 0;
  app.store.onAnyChange((event) => {
    if (event.collection === 'auth/tokens.yaml' && event.source === 'api') writes += 1;
  });

  let written = nextTokenWrite(app);
  await app.inject({ url: '/api/auth/whoami', headers: bearer(admin) });
  await written;
  t.is(app.auth.list()[0].last_used_at, '2030-01-01T00:00:00.000Z');

  clock = new Date('2030-01-01T00:00:30.000Z');
  await app.inject({ url: '/api/auth/whoami', headers: bearer(admin) });
  clock = new Date('2030-01-01T00:01:01.000Z');
  written = nextTokenWrite(app);
  await app.inject({ url: '/api/auth/whoami', headers: bearer(admin) });
  await written;
  t.is(app.auth.list()[0].last_used_at, '2030-01-01T00:01:01.000Z');
  t.is(writes, 2, 'the use 30 s later wrote nothing');
});
