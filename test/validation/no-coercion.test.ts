/**
 * Bodies are never coerced (API.md §2.1): a JSON value of the wrong type is a 422 naming the field,
 * and nothing is created. Query strings keep their documented string forms.
 */
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';

const open = { auth: { mode: 'off' } };

async function expect422(
  t: import('ava').ExecutionContext,
  app: FastifyInstance,
  method: 'POST' | 'PUT',
  url: string,
  payload: unknown,
  field: string,
) {
  const res = await app.inject({ method, url, payload: payload as object });
  t.is(res.statusCode, 422, `${method} ${url} ${JSON.stringify(payload)} → ${res.statusCode} ${res.body}`);
  const body = res.json();
  t.is(body.id, 'validation_failed');
  t.true(
    body.details.some((d: { path: string }) => d.path === field),
    `details name ${field}: ${res.body}`,
  );
  t.true(body.message.includes(field.replace(/^\//, '')), `message names ${field}: ${body.message}`);
}

test('middleware names of the wrong type are refused, nothing is created', async (t) => {
  const app = await build(t, { config: open });
  await expect422(t, app, 'POST', '/api/middlewares', { name: 5, type: 'headers', config: {} }, '/name');
  await expect422(t, app, 'POST', '/api/middlewares', { name: true, type: 'headers', config: {} }, '/name');
  await expect422(t, app, 'POST', '/api/middlewares', { name: ['arr'], type: 'headers', config: {} }, '/name');
  t.deepEqual((await app.inject({ url: '/api/middlewares' })).json(), []);
});

test('token bodies: an array name and a string number are refused', async (t) => {
  const app = await build(t, { config: open });
  await expect422(t, app, 'POST', '/api/auth/tokens', { name: ['arr'], role: 'viewer' }, '/name');
  await expect422(
    t,
    app,
    'POST',
    '/api/auth/tokens',
    { name: 'ci', role: 'viewer', expires_in_days: '30' },
    '/expires_in_days',
  );
  t.deepEqual(
    (await app.inject({ url: '/api/auth/tokens' }))
      .json()
      .map((x: { name: string }) => x.name)
      .filter((n: string) => n === 'arr' || n === 'ci'),
    [],
  );
});

test('a backup dry_run of 1 is not a boolean', async (t) => {
  const app = await build(t, { config: open });
  await expect422(t, app, 'POST', '/api/backup/create', { dry_run: 1 }, '/dry_run');
  await expect422(t, app, 'POST', '/api/backup/create', { dry_run: 'true' }, '/dry_run');
  t.deepEqual((await app.inject({ url: '/api/backup/list' })).json(), []);
});

test('a one-element array is not a container name', async (t) => {
  const app = await build(t, { config: open });
  await expect422(
    t,
    app,
    'POST',
    '/api/container/container/restart',
    { container_name: ['traefik'] },
    '/container_name',
  );
  await expect422(t, app, 'POST', '/api/container/container/restart', { container_name: 7 }, '/container_name');
});

test('other groups: a number for a string, a string for a number or boolean', async (t) => {
  const app = await build(t, { config: open });
  await expect422(
    t,
    app,
    'POST',
    '/api/services',
    { name: 12, type: 'loadBalancer', config: { servers: [{ url: 'http://a:1' }] } },
    '/name',
  );
  await expect422(t, app, 'POST', '/api/ip/unban', { ip: ['192.0.2.1'] }, '/ip');
  await expect422(t, app, 'PUT', '/api/plugins/configpath', { path: 42 }, '/path');
  await expect422(
    t,
    app,
    'PUT',
    '/api/mtls/middleware/config',
    { rules: [], refresh_interval: true },
    '/refresh_interval',
  );
  await expect422(t, app, 'PUT', '/api/mtls/middleware/config', { rules: [], reject_message: 403 }, '/reject_message');
});

test('query strings keep their documented string forms', async (t) => {
  const app = await build(t, { config: open });
  for (const name of ['a', 'b', 'c']) {
    t.is(
      (await app.inject({ method: 'POST', url: '/api/middlewares', payload: { name, type: 'compress', config: {} } }))
        .statusCode,
      201,
    );
  }
  const page = await app.inject({ url: '/api/middlewares?page=2&page_size=1' });
  t.is(page.statusCode, 200);
  t.deepEqual(
    page.json().map((m: { id: string }) => m.id),
    ['b'],
  );
  t.is((await app.inject({ url: '/api/health?deep=0' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/middlewares?page=1.5' })).statusCode, 422);
  t.is((await app.inject({ url: '/api/middlewares?page=abc' })).statusCode, 422);
});
