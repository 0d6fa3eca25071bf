/** The example plugin (examples/hello-plugin) loaded end to end, and its entry in GET /api/system/plugins. */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { build, tempDir } from '../helpers/build.ts';
import { buildWithPlugins, pluginReports } from './helpers.ts';

test('GET /api/ext/hello/greeting answers with the greeting from plugins.config.hello', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello'], pluginConfig: { hello: { greeting: 'Hi' } } });
  const res = await app.inject({ method: 'GET', url: '/api/ext/hello/greeting?name=Ada' });
  t.is(res.statusCode, 200);
  t.deepEqual(res.json(), { message: 'Hi, Ada!', app_version: res.json().app_version });
  t.regex(res.json().app_version, /^\d+\.\d+\.\d+/);
  t.is(res.headers['api-version'], '1', 'host versioning applies to plugin routes');
});

test('the example plugin gets the defaults of its config_schema when plugins.config has no section', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello'] });
  const res = await app.inject({ method: 'GET', url: '/api/ext/hello/greeting' });
  t.is(res.json().message, 'Hello, world!');
});

test('notes are created, listed, read and deleted through the store as YAML files under data/ext/hello', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const app = await buildWithPlugins(t, { plugins: ['hello'], dataDir });
  const created = await app.inject({
    method: 'POST',
    url: '/api/ext/hello/notes',
    payload: { text: 'rotate the CrowdSec key' },
  });
  t.is(created.statusCode, 201);
  const note = created.json();
  t.regex(note.id, /^note-[0-9a-f]{8}$/);
  t.is(created.headers.location, `/api/ext/hello/notes/${note.id}`);

  const file = path.join(dataDir, 'ext', 'hello', `${note.id}.yaml`);
  const stored = parse(await readFile(file, 'utf8'));
  t.deepEqual(stored.value, { text: 'rotate the CrowdSec key', created_at: note.created_at });
  t.truthy(stored.created_at, 'the store adds its own timestamps beside the wrapped value');

  t.deepEqual((await app.inject({ method: 'GET', url: '/api/ext/hello/notes' })).json(), [note]);
  t.deepEqual((await app.inject({ method: 'GET', url: `/api/ext/hello/notes/${note.id}` })).json(), note);

  t.is((await app.inject({ method: 'DELETE', url: `/api/ext/hello/notes/${note.id}` })).statusCode, 204);
  t.deepEqual(await readdir(path.dirname(file)), []);
  const gone = await app.inject({ method: 'GET', url: `/api/ext/hello/notes/${note.id}` });
  t.is(gone.statusCode, 404);
  t.deepEqual(gone.json(), { id: 'hello.note_not_found', message: `no note with id ${note.id}` });
});

test('POST /api/ext/hello/notes with an invalid body answers 422 and writes nothing', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const app = await buildWithPlugins(t, { plugins: ['hello'], dataDir });
  const res = await app.inject({ method: 'POST', url: '/api/ext/hello/notes', payload: { text: '' } });
  t.is(res.statusCode, 422);
  t.is(res.json().id, 'validation_failed');
  t.deepEqual(res.json().details, [
    { path: '/text', message: 'must NOT have fewer than 1 characters (received 0 characters)' },
  ]);
  t.is((await app.inject({ method: 'GET', url: '/api/ext/hello/notes' })).json().length, 0);
  t.deepEqual(await readdir(path.join(dataDir, 'ext', 'hello')).catch(() => []), []);
});

test('the example plugin refuses notes past max_notes with its own error id', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello'], pluginConfig: { hello: { max_notes: 1 } } });
  t.is((await app.inject({ method: 'POST', url: '/api/ext/hello/notes', payload: { text: 'one' } })).statusCode, 201);
  const res = await app.inject({ method: 'POST', url: '/api/ext/hello/notes', payload: { text: 'two' } });
  t.is(res.statusCode, 409);
  t.is(res.json().id, 'hello.too_many_notes');
});

test('GET /api/system/plugins reports a loaded plugin with its routes, and X-App-Generation', async (t) => {
  const before = new Date().toISOString();
  const app = await buildWithPlugins(t, { plugins: ['hello'] });
  const res = await app.inject({ method: 'GET', url: '/api/system/plugins' });
  t.is(res.statusCode, 200);
  t.is(res.headers['x-app-generation'], '1');
  const [hello] = res.json();
  t.like(hello, {
    name: 'hello',
    dir: 'hello',
    version: '1.0.0',
    api_version: '^1.0.0',
    prefix: '/api/ext/hello',
    status: 'loaded',
    error: null,
  });
  t.deepEqual(hello.routes, [
    { method: 'GET', url: '/api/ext/hello/greeting' },
    { method: 'GET', url: '/api/ext/hello/notes' },
    { method: 'POST', url: '/api/ext/hello/notes' },
    { method: 'GET', url: '/api/ext/hello/notes/:id' },
    { method: 'DELETE', url: '/api/ext/hello/notes/:id' },
  ]);
  t.true(hello.loaded_at >= before);
});

test('loaded plugin routes are in the OpenAPI document; 503 fallbacks of failed plugins are not', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'throws'] });
  t.is((await pluginReports(app)).get('throws')?.status, 'failed');
  const paths = Object.keys((await app.inject({ method: 'GET', url: '/api/openapi.json' })).json().paths);
  t.true(paths.includes('/api/ext/hello/greeting'));
  t.false(paths.some((p) => p.startsWith('/api/ext/throws')));
});

test('GET /api/system/plugins answers [] when PLUGINS_DIR does not exist', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const res = await app.inject({ method: 'GET', url: '/api/system/plugins' });
  t.is(res.statusCode, 200);
  t.deepEqual(res.json(), []);
  t.is(res.headers['x-app-generation'], '1');
});
