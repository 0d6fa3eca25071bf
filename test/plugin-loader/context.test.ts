/** What a plugin receives (API.md §6 opts table) and how its routes sit inside the host: auth, errors, store. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { CORE_ERROR_IDS } from '../../core/errors/app-error.ts';
import { buildWithPlugins } from './helpers.ts';

test('opts carry config, logger, store, core views, errors with the core catalogue, and host', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'], dataDir });
  const body = (await app.inject({ method: 'GET', url: '/api/ext/probe/opts' })).json();
  t.deepEqual(body.keys, ['config', 'core', 'errors', 'host', 'logger', 'store']);
  t.deepEqual(body.host, { api_version: '1.0.0', app_version: body.host.app_version, data_dir: dataDir });
  t.deepEqual(body.catalogue, [...CORE_ERROR_IDS]);
  t.true(body.catalogue.includes('plugin_unavailable'));
  t.true(Array.isArray(body.core.middlewares), 'a core view lists an array even before its collection exists');
  t.is(body.core.missing, null);
});

test('errors.create prefixes the id with the plugin name and keeps status and details', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'] });
  const res = await app.inject({ method: 'GET', url: '/api/ext/probe/teapot' });
  t.is(res.statusCode, 418);
  t.deepEqual(res.json(), {
    id: 'probe.teapot',
    message: 'short and stout',
    details: [{ path: '/pot', message: 'is a teapot' }],
  });
});

test('an error thrown later by a plugin route is an ordinary 500 that hides its text', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'] });
  const res = await app.inject({ method: 'GET', url: '/api/ext/probe/crash' });
  t.is(res.statusCode, 500);
  t.is(res.json().id, 'internal');
  t.notRegex(res.body, /secret/);
});

test('the store wraps every value as {value}, so keys the store reserves survive a round trip', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'], dataDir });
  const value = { id: 'mine', created_at: 'yesterday', nested: { list: [1, 'two'] } };
  const put = await app.inject({ method: 'PUT', url: '/api/ext/probe/store/item-1', payload: value });
  t.is(put.statusCode, 200);
  t.like(put.json(), { key: 'item-1', value });
  t.deepEqual((await app.inject({ method: 'GET', url: '/api/ext/probe/store/item-1' })).json(), { value });
  const file = parse(await readFile(path.join(dataDir, 'ext', 'probe', 'item-1.yaml'), 'utf8'));
  t.deepEqual(file.value, value);
  t.deepEqual((await app.inject({ method: 'GET', url: '/api/ext/probe/store/absent' })).json(), { value: null });
});

test('a store key that is not a valid file name answers 422 and writes nothing', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'] });
  const res = await app.inject({ method: 'PUT', url: '/api/ext/probe/store/Not.Valid', payload: { a: 1 } });
  t.is(res.statusCode, 422);
  t.is(res.json().id, 'validation_failed');
});

test('plugin routes are class operations whatever they declare, and keep their own config.role', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'] });
  t.like((await app.inject({ method: 'GET', url: '/api/ext/probe/config' })).json(), { route: { auth: 'operations' } });
  t.like((await app.inject({ method: 'POST', url: '/api/ext/probe/admin-only' })).json(), {
    route: { auth: 'operations', role: 'admin' },
  });
});

test('in auth mode ops plugin routes need a token: viewer reads, operator writes, config.role admin needs admin', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'], authMode: 'ops' });
  const token = async (name: string, role: 'viewer' | 'operator' | 'admin') => {
    const created = await app.auth.create(name, role);
    if (created === 'exists') throw new Error(`token ${name} exists`);
    return { authorization: `Bearer ${created.token}` };
  };
  const [viewer, operator, admin] = [
    await token('v', 'viewer'),
    await token('o', 'operator'),
    await token('a', 'admin'),
  ];

  t.is((await app.inject({ method: 'GET', url: '/api/ext/hello/greeting' })).statusCode, 401);
  t.is((await app.inject({ method: 'GET', url: '/api/ext/hello/greeting', headers: viewer })).statusCode, 200);
  t.is(
    (await app.inject({ method: 'POST', url: '/api/ext/hello/notes', payload: { text: 'x' }, headers: viewer }))
      .statusCode,
    403,
  );
  t.is(
    (await app.inject({ method: 'POST', url: '/api/ext/hello/notes', payload: { text: 'x' }, headers: operator }))
      .statusCode,
    201,
  );
  t.is(
    (await app.inject({ method: 'POST', url: '/api/ext/probe/admin-only' })).statusCode,
    401,
    'a route declaring auth: public is not public',
  );
  t.is((await app.inject({ method: 'POST', url: '/api/ext/probe/admin-only', headers: operator })).statusCode, 403);
  t.is((await app.inject({ method: 'POST', url: '/api/ext/probe/admin-only', headers: admin })).statusCode, 200);
  t.is(
    (await app.inject({ method: 'GET', url: '/api/system/plugins' })).statusCode,
    401,
    'the report is class operations too',
  );
  t.is((await app.inject({ method: 'GET', url: '/api/system/plugins', headers: viewer })).statusCode, 200);
});
