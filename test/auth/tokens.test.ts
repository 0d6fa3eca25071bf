/** /api/auth/tokens (API.md §4.15): create shows the token once, lists never show secrets, the last admin stays. */
import test from 'ava';
import { build } from '../helpers/build.ts';
import { bearer, initialAdminToken } from './support.ts';

const TOKEN_KEYS = ['created_at', 'expires_at', 'last_used_at', 'name', 'role'];

async function setup(t: Parameters<typeof build>[0]) {
  const app = await build(t, { now: () => new Date('2030-01-01T00:00:00.000Z') });
  const admin = bearer(await initialAdminToken(app));
  const post = (payload: unknown) =>
    app.inject({ method: 'POST', url: '/api/auth/tokens', headers: admin, payload: payload as object });
  return { app, admin, post };
}

test('POST /api/auth/tokens answers 201 with Location and the token, shown only there', async (t) => {
  const { app, admin, post } = await setup(t);
  const response = await post({ name: 'ci', role: 'operator', expires_in_days: 30, unknown_field: 'dropped' });
  t.is(response.statusCode, 201);
  t.is(response.headers.location, '/api/auth/tokens/ci');
  const body = response.json();
  t.deepEqual(Object.keys(body).sort(), ['created_at', 'expires_at', 'name', 'role', 'token']);
  t.like(body, {
    name: 'ci',
    role: 'operator',
    created_at: '2030-01-01T00:00:00.000Z',
    expires_at: '2030-01-31T00:00:00.000Z',
  });
  t.regex(body.token, /^smk_[A-Za-z0-9_-]{43}$/);
  const whoami = await app.inject({ url: '/api/auth/whoami', headers: bearer(body.token) });
  t.deepEqual(whoami.json(), { name: 'ci', role: 'operator', auth_mode: 'ops' });

  const list = await app.inject({ url: '/api/auth/tokens', headers: admin });
  t.is(list.statusCode, 200);
  t.is(list.headers['x-total-count'], '2');
  t.false(list.body.includes(body.token));
  for (const entry of list.json()) t.deepEqual(Object.keys(entry).sort(), TOKEN_KEYS, 'no hash, no token');
  t.deepEqual(
    list.json().map((e: { name: string }) => e.name),
    ['ci', 'initial-admin'],
  );
});

test('GET /api/auth/tokens pages with X-Total-Count and Link', async (t) => {
  const { app, admin, post } = await setup(t);
  for (const name of ['a', 'b']) await post({ name, role: 'viewer' });
  const page = await app.inject({ url: '/api/auth/tokens?page=2&page_size=1', headers: admin });
  t.deepEqual(
    page.json().map((e: { name: string }) => e.name),
    ['b'],
  );
  t.is(page.headers['x-total-count'], '3');
  t.is(
    page.headers.link,
    '</api/auth/tokens?page=3&page_size=1>; rel="next", </api/auth/tokens?page=1&page_size=1>; rel="prev"',
  );
  t.deepEqual((await app.inject({ url: '/api/auth/tokens?page=9', headers: admin })).json(), []);
  t.is((await app.inject({ url: '/api/auth/tokens?page_size=0', headers: admin })).statusCode, 422);
});

test('a duplicate name answers 409 already_exists', async (t) => {
  const { post } = await setup(t);
  t.is((await post({ name: 'dup', role: 'viewer' })).statusCode, 201);
  const again = await post({ name: 'dup', role: 'admin' });
  t.is(again.statusCode, 409);
  t.is(again.json().id, 'already_exists');
});

test('invalid bodies answer 422 validation_failed and create nothing', async (t) => {
  const { app, post } = await setup(t);
  const bodies = [
    {},
    { name: 'x' },
    { role: 'viewer' },
    { name: 'Bad Name', role: 'viewer' },
    { name: 'ok', role: 'root' },
    { name: 'ok', role: 'viewer', expires_in_days: 0 },
    { name: 'ok', role: 'viewer', expires_in_days: 3651 },
    { name: 'ok', role: 'viewer', expires_in_days: 1.5 },
    { name: '-x', role: 'viewer' },
  ];
  for (const body of bodies) {
    const response = await post(body);
    t.is(response.statusCode, 422, JSON.stringify(body));
    t.is(response.json().id, 'validation_failed');
    t.true(Array.isArray(response.json().details));
  }
  t.is(app.auth.list().length, 1);
});

test('DELETE /api/auth/tokens/:name answers 204, then 404; unknown names 404; bad names 422', async (t) => {
  const { app, admin, post } = await setup(t);
  await post({ name: 'gone', role: 'viewer' });
  t.is((await app.inject({ method: 'DELETE', url: '/api/auth/tokens/gone', headers: admin })).statusCode, 204);
  const again = await app.inject({ method: 'DELETE', url: '/api/auth/tokens/gone', headers: admin });
  t.is(again.statusCode, 404);
  t.is(again.json().id, 'not_found');
  t.is((await app.inject({ method: 'DELETE', url: '/api/auth/tokens/Not_A_Slug', headers: admin })).statusCode, 422);
});

test('the last admin token cannot be deleted (409 conflict); with a second admin it can', async (t) => {
  const { app, admin, post } = await setup(t);
  await post({ name: 'viewer-only', role: 'viewer' });
  const refused = await app.inject({ method: 'DELETE', url: '/api/auth/tokens/initial-admin', headers: admin });
  t.is(refused.statusCode, 409);
  t.is(refused.json().id, 'conflict');
  const second = (await post({ name: 'admin-2', role: 'admin' })).json().token as string;
  t.is(
    (await app.inject({ method: 'DELETE', url: '/api/auth/tokens/initial-admin', headers: bearer(second) })).statusCode,
    204,
  );
  t.is(
    (await app.inject({ url: '/api/auth/whoami', headers: admin })).statusCode,
    401,
    'a deleted token stops working at once',
  );
  t.is(
    (await app.inject({ method: 'DELETE', url: '/api/auth/tokens/admin-2', headers: bearer(second) })).statusCode,
    409,
  );
});

test('an expired admin token does not count as a remaining admin', async (t) => {
  let clock = new Date('2030-01-01T00:00:00.000Z');
  const app = await build(t, { now: () => clock });
  const admin = bearer(await initialAdminToken(app));
  await app.inject({
    method: 'POST',
    url: '/api/auth/tokens',
    headers: admin,
    payload: { name: 'brief', role: 'admin', expires_in_days: 1 },
  });
  clock = new Date('2030-01-03T00:00:00.000Z');
  t.is((await app.inject({ method: 'DELETE', url: '/api/auth/tokens/initial-admin', headers: admin })).statusCode, 409);
  t.is(
    (await app.inject({ method: 'DELETE', url: '/api/auth/tokens/brief', headers: admin })).statusCode,
    204,
    'the expired one may go',
  );
});
