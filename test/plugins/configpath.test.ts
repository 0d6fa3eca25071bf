import test from 'ava';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertError, call, pluginsApp, STATIC_CONFIG } from './support.ts';

test('GET /api/plugins/configpath reports env, unset and settings sources; PUT persists in settings.yaml and takes effect', async (t) => {
  const unset = await pluginsApp(t, { text: null });
  t.deepEqual((await call(unset.app, { url: '/api/plugins/configpath' })).body, {
    path: null,
    source: 'unset',
    exists: false,
    writable: false,
  });

  const { app, file, dir } = await pluginsApp(t, { text: STATIC_CONFIG });
  t.deepEqual((await call(app, { url: '/api/plugins/configpath' })).body, {
    path: file,
    source: 'env',
    exists: true,
    writable: true,
  });

  const other = path.join(dir, 'sub', 'traefik.yaml');
  await mkdir(path.dirname(other));
  const put = await call(app, { method: 'PUT', url: '/api/plugins/configpath', payload: { path: other } });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.is(put.headers['x-restart-required'], 'true');
  t.deepEqual(put.body, { path: other, source: 'settings', exists: false, writable: true });
  t.regex(
    await readFile(path.join(app.store.dataDir, 'settings.yaml'), 'utf8'),
    /proxy_static_config_path: .*sub\/traefik\.yaml/,
  );
  // the new path is the one lists and edits use now
  t.deepEqual((await call(app, { url: '/api/plugins' })).body, []);
  t.is(
    (
      await call(app, {
        method: 'POST',
        url: '/api/plugins/install',
        payload: { module_name: 'github.com/fosrl/badger', version: 'v1.2.0' },
      })
    ).status,
    201,
  );
  t.regex(await readFile(other, 'utf8'), /badger/);
  t.is(await readFile(file, 'utf8'), STATIC_CONFIG);
});

test('PUT /api/plugins/configpath answers 422 for every invalid path and keeps the setting', async (t) => {
  const { app, dir, file } = await pluginsApp(t, { text: STATIC_CONFIG });
  await writeFile(path.join(dir, 'plain'), '');
  const cases: Array<[string, unknown]> = [
    ['relative', { path: 'traefik.yml' }],
    ['not yaml', { path: path.join(dir, 'traefik.toml') }],
    ['dot-dot segment', { path: `${dir}/../x/traefik.yml` }],
    ['too long', { path: `/${'a'.repeat(4100)}.yml` }],
    ['parent missing', { path: path.join(dir, 'missing', 'traefik.yml') }],
    ['parent is a file', { path: path.join(dir, 'plain', 'traefik.yml') }],
    ['empty', { path: '' }],
    ['missing', {}],
    ['not a string', { path: 42 }],
  ];
  for (const [name, payload] of cases) {
    const r = await call(app, { method: 'PUT', url: '/api/plugins/configpath', payload: payload as object });
    t.is(r.status, 422, `${name}: ${JSON.stringify(r.body)}`);
    t.is(r.body.id, 'validation_failed', name);
  }
  assertError(t, await call(app, { method: 'PUT', url: '/api/plugins/configpath' }), 422, 'validation_failed');
  t.deepEqual((await call(app, { url: '/api/plugins/configpath' })).body, {
    path: file,
    source: 'env',
    exists: true,
    writable: true,
  });
});
