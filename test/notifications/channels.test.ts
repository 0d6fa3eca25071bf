/** /api/notifications/channels (API.md §4.21): CRUD, secrets never returned, per-type validation, auth, test sends. */
import { createHmac } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from './support.ts';

const SECRET = 'whsec-very-secret-value-42';
const HEADER_TOKEN = 'Bearer header-token-abcdef';

test('channels CRUD: 0600 file with the secret, masked views, "********" keeps it on PUT, 404 after DELETE', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const created = await app.inject({
    method: 'POST',
    url: '/api/notifications/channels',
    payload: {
      name: 'Ops Webhook',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/hook', secret: SECRET, headers: { Authorization: HEADER_TOKEN } },
    },
  });
  t.is(created.statusCode, 201, created.body);
  t.is(created.headers.location, '/api/notifications/channels/ops-webhook');
  const view = created.json();
  t.like(view, {
    id: 'ops-webhook',
    name: 'Ops Webhook',
    type: 'webhook',
    enabled: true,
    categories: ['proxy', 'certs', 'security', 'containers', 'backups', 'config', 'system'],
    min_severity: 'warning',
    schedule: 'immediate',
    quiet_hours: null,
    max_per_minute: 30,
  });
  t.deepEqual(view.config, {
    url: 'http://127.0.0.1:9/hook',
    secret: '********',
    headers: { Authorization: '********' },
  });
  t.false(created.body.includes(SECRET));
  t.false(created.body.includes(HEADER_TOKEN));

  const file = path.join(app.store.dataDir, 'notifications', 'ops-webhook.yaml');
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.true((await readFile(file, 'utf8')).includes(SECRET));

  const listed = await app.inject({ url: '/api/notifications/channels' });
  t.is(listed.headers['x-total-count'], '1');
  t.false(listed.body.includes(SECRET));
  const one = await app.inject({ url: '/api/notifications/channels/ops-webhook' });
  t.is(one.json().config.secret, '********');
  t.is(one.headers.etag, `"${one.json().etag}"`);

  // PUT sends the masks back: the stored secret and header stay; other fields change
  const put = await app.inject({
    method: 'PUT',
    url: '/api/notifications/channels/ops-webhook',
    payload: { ...view, min_severity: 'error', categories: ['proxy'] },
  });
  t.is(put.statusCode, 200, put.body);
  t.like(put.json(), { min_severity: 'error', categories: ['proxy'] });
  const stored = await readFile(file, 'utf8');
  t.true(stored.includes(SECRET));
  t.true(stored.includes(HEADER_TOKEN));
  // a new secret replaces it
  await app.inject({
    method: 'PUT',
    url: '/api/notifications/channels/ops-webhook',
    payload: { ...view, config: { ...view.config, secret: 'another-secret-9999' } },
  });
  t.true((await readFile(file, 'utf8')).includes('another-secret-9999'));
  // a stale If-Match
  const stale = await app.inject({
    method: 'PUT',
    url: '/api/notifications/channels/ops-webhook',
    headers: { 'if-match': `"${view.etag}"` },
    payload: view,
  });
  t.is(stale.statusCode, 412);

  const duplicate = await app.inject({
    method: 'POST',
    url: '/api/notifications/channels',
    payload: { name: 'ops webhook', type: 'slack', config: { webhook_url: 'https://hooks.slack.test/x' } },
  });
  t.is(duplicate.statusCode, 409);
  t.is(duplicate.json().id, 'already_exists');

  t.is((await app.inject({ method: 'DELETE', url: '/api/notifications/channels/ops-webhook' })).statusCode, 204);
  t.is((await app.inject({ url: '/api/notifications/channels/ops-webhook' })).statusCode, 404);
  t.is((await app.inject({ method: 'DELETE', url: '/api/notifications/channels/ops-webhook' })).statusCode, 404);
});

test('each type validates its config: 422 naming the field; a mask with nothing stored is refused', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const post = (payload: object) => app.inject({ method: 'POST', url: '/api/notifications/channels', payload });
  const cases: Array<[object, string]> = [
    [{ name: 'a', type: 'telegram', config: { bot_token: '123:abc' } }, '/config/chat_id'],
    [
      { name: 'b', type: 'email', config: { host: 'mx', port: 25, security: 'ssl', from: 'a@b', to: ['c@d'] } },
      '/config/security',
    ],
    [
      { name: 'c', type: 'email', config: { host: 'mx', port: '25', security: 'tls', from: 'a@b', to: ['c@d'] } },
      '/config/port',
    ],
    [{ name: 'd', type: 'ntfy', config: { url: 'ftp://x', topic: 'alerts' } }, '/config/url'],
    [{ name: 'e', type: 'gotify', config: { url: 'http://gotify' } }, '/config/token'],
    [
      { name: 'f', type: 'discord', config: { webhook_url: 'https://discord.test/api/webhooks/1/x', extra: 1 } },
      '/config',
    ],
    [{ name: 'g', type: 'pager', config: {} }, '/type'],
    [{ name: 'h', type: 'webhook', config: { url: 'http://x', secret: '********' } }, '/config/secret'],
    [
      {
        name: 'i',
        type: 'slack',
        config: { webhook_url: 'https://x' },
        quiet_hours: { start: '22:00', end: '07:00', timezone: 'Mars/Base' },
      },
      '/quiet_hours/timezone',
    ],
    [{ name: 'j', type: 'slack', config: { webhook_url: 'https://x' }, min_severity: 'critical' }, '/min_severity'],
  ];
  for (const [payload, field] of cases) {
    const response = await post(payload);
    t.is(response.statusCode, 422, `${JSON.stringify(payload)} → ${response.body}`);
    t.is(response.json().id, 'validation_failed');
    t.true(
      (response.json().details as Array<{ path: string }>).some((d) => d.path.startsWith(field)),
      `${field} in ${response.body}`,
    );
  }
  t.deepEqual((await app.inject({ url: '/api/notifications/channels' })).json(), []);
  // every type with a valid config
  const valid = [
    { type: 'webhook', config: { url: 'http://127.0.0.1:9/x' } },
    { type: 'ntfy', config: { url: 'https://ntfy.test', topic: 'alerts', token: 'tk_abcdef' } },
    { type: 'gotify', config: { url: 'https://gotify.test', token: 'AbCdEf123' } },
    { type: 'discord', config: { webhook_url: 'https://discord.test/api/webhooks/1/abcdefgh' } },
    { type: 'slack', config: { webhook_url: 'https://hooks.slack.test/services/T/B/abcdefgh' } },
    { type: 'telegram', config: { bot_token: '123456:ABC-def_ghi', chat_id: '-100123' } },
    {
      type: 'email',
      config: {
        host: 'smtp.test',
        port: 587,
        security: 'starttls',
        username: 'u',
        password: 'pw-secret',
        from: 'sm@test',
        to: ['ops@test'],
      },
    },
  ];
  for (const [n, channel] of valid.entries()) {
    const response = await post({ name: `valid ${n}`, ...channel });
    t.is(response.statusCode, 201, response.body);
    for (const secret of ['tk_abcdef', 'AbCdEf123', 'abcdefgh', 'ABC-def_ghi', 'pw-secret'])
      t.false(response.body.includes(secret), `${secret} in ${response.body}`);
  }
});

test('class O: no token 401, a viewer reads but may not write (403), an operator writes', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'ops' } } });
  const viewer = (await app.auth.create('watcher', 'viewer')) as { token: string };
  const operator = (await app.auth.create('ops', 'operator')) as { token: string };
  const payload = { name: 'n', type: 'slack', config: { webhook_url: 'https://hooks.slack.test/services/x' } };
  t.is((await app.inject({ url: '/api/notifications/channels' })).statusCode, 401);
  t.is((await app.inject({ url: '/api/notifications/history' })).statusCode, 401);
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  t.is((await app.inject({ url: '/api/notifications/channels', headers: as(viewer.token) })).statusCode, 200);
  const denied = await app.inject({
    method: 'POST',
    url: '/api/notifications/channels',
    headers: as(viewer.token),
    payload,
  });
  t.is(denied.statusCode, 403);
  const made = await app.inject({
    method: 'POST',
    url: '/api/notifications/channels',
    headers: as(operator.token),
    payload,
  });
  t.is(made.statusCode, 201);
  const tested = await app.inject({
    method: 'POST',
    url: '/api/notifications/channels/n/test',
    headers: as(viewer.token),
  });
  t.is(tested.statusCode, 403);
});

test('POST /test sends a real signed message; a failing receiver gives delivered false with the secrets scrubbed', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const receiver = await startReceiver(t);
  await app.inject({
    method: 'POST',
    url: '/api/notifications/channels',
    payload: {
      name: 'hook',
      type: 'webhook',
      config: {
        url: `${receiver.url}/hook?key=query-secret-777`,
        secret: SECRET,
        headers: { 'X-Token': HEADER_TOKEN },
      },
    },
  });
  const ok = await app.inject({ method: 'POST', url: '/api/notifications/channels/hook/test' });
  t.is(ok.statusCode, 200);
  t.is(ok.json().delivered, true);
  t.is(ok.json().error, null);
  t.true(ok.json().latency_ms >= 0);
  t.is(receiver.received.length, 1);
  const request = receiver.received[0];
  t.is(request.method, 'POST');
  t.is(request.url, '/hook?key=query-secret-777');
  t.is(request.headers['x-token'], HEADER_TOKEN);
  t.regex(String(request.headers['content-type']), /^application\/json/);
  t.is(
    request.headers['x-stack-manager-signature'],
    `sha256=${createHmac('sha256', SECRET).update(request.body).digest('hex')}`,
  );
  t.like(JSON.parse(request.body), { source: 'stack-manager', category: 'system', severity: 'info' });

  // the receiver echoes the secrets back in its error: none of them reaches the answer
  receiver.behaviour.status = 500;
  receiver.behaviour.body = `bad signature for ${SECRET}, header ${HEADER_TOKEN}, key query-secret-777`;
  const failed = await app.inject({ method: 'POST', url: '/api/notifications/channels/hook/test' });
  t.is(failed.json().delivered, false);
  t.regex(failed.json().error, /^HTTP 500: bad signature for \*\*\*\*\*\*\*\*/);
  for (const secret of [SECRET, HEADER_TOKEN, 'query-secret-777']) t.false(failed.body.includes(secret));

  await receiver.close();
  const refused = await app.inject({ method: 'POST', url: '/api/notifications/channels/hook/test' });
  t.is(refused.json().delivered, false);
  t.regex(refused.json().error, /^fetch failed: (ECONNREFUSED|UND_ERR_SOCKET)/);
  t.is((await app.inject({ method: 'POST', url: '/api/notifications/channels/nope/test' })).statusCode, 404);
});

test('hand-edited channel files are validated like API bodies: a valid one is served masked, an invalid one is reported', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const dir = path.join(app.store.dataDir, 'notifications');
  await writeFile(
    path.join(dir, 'pager.yaml'),
    'name: Pager\ntype: gotify\nmin_severity: error\nconfig:\n  url: https://gotify.test\n  token: HandToken123\n',
  );
  await writeFile(path.join(dir, 'broken.yaml'), 'name: Broken\ntype: telegram\nconfig:\n  bot_token: "1:abc"\n');
  const view = await waitFor(async () => {
    const response = await app.inject({ url: '/api/notifications/channels/pager' });
    return response.statusCode === 200 ? response.json() : null;
  }, 1_000);
  t.like(view, { name: 'Pager', type: 'gotify', min_severity: 'error', schedule: 'immediate', enabled: true });
  t.deepEqual(view.config, { url: 'https://gotify.test', token: '********' });
  const invalid = await waitFor(
    () => app.store.invalidFiles().find((file) => file.path.endsWith(path.join('notifications', 'broken.yaml'))),
    1_000,
  );
  t.regex(invalid.message, /chat_id/);
  t.is((await app.inject({ url: '/api/notifications/channels/broken' })).statusCode, 404);
});
