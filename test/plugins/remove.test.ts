import test from 'ava';
import { readFile } from 'node:fs/promises';
import { assertError, call, pluginMiddleware, pluginsApp, STATIC_CONFIG } from './support.ts';

const ONLY_BADGER = `# only one plugin
api:
  insecure: true # keep
experimental:
  plugins:
    badger:
      moduleName: github.com/fosrl/badger
      version: v1.2.0
log:
  level: INFO
`;

test('DELETE /api/plugins/remove by key drops the entry, then the empty plugins and experimental maps; comments stay', async (t) => {
  const { app, file } = await pluginsApp(t, { text: ONLY_BADGER });
  const r = await call(app, { method: 'DELETE', url: '/api/plugins/remove', payload: { key: 'badger' } });
  t.is(r.status, 204, JSON.stringify(r.body));
  t.is(r.headers['x-restart-required'], 'true');
  t.is(await readFile(file, 'utf8'), '# only one plugin\napi:\n  insecure: true # keep\nlog:\n  level: INFO\n');
  t.is(await readFile(`${file}.bak`, 'utf8'), ONLY_BADGER);
  assertError(
    t,
    await call(app, { method: 'DELETE', url: '/api/plugins/remove', payload: { key: 'badger' } }),
    404,
    'not_found',
  );
});

test('DELETE /api/plugins/remove by module_name, by query key, and a local plugin; other entries stay', async (t) => {
  const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG });
  t.is(
    (
      await call(app, {
        method: 'DELETE',
        url: '/api/plugins/remove',
        payload: { module_name: 'github.com/fosrl/badger' },
      })
    ).status,
    204,
  );
  t.is((await call(app, { method: 'DELETE', url: '/api/plugins/remove?key=myplugin' })).status, 204);
  const text = await readFile(file, 'utf8');
  t.false(text.includes('badger'));
  t.false(text.includes('localPlugins'));
  t.true(text.includes('# plugins load at startup only'));
  t.true(text.includes('crowdsec-bouncer-traefik-plugin'));
  const list = await call(app, { url: '/api/plugins' });
  t.deepEqual(
    list.body.map((p: any) => p.key),
    ['crowdsec'],
  );
});

test('DELETE /api/plugins/remove answers 409 in_use with the middlewares in details, file untouched', async (t) => {
  const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG });
  const id = await pluginMiddleware(t, app, 'Bouncer', 'crowdsec');
  const body = assertError(
    t,
    await call(app, { method: 'DELETE', url: '/api/plugins/remove', payload: { key: 'crowdsec' } }),
    409,
    'in_use',
  );
  t.deepEqual(body.details, [{ path: `/api/middlewares/${id}`, message: 'uses plugin crowdsec' }]);
  t.is(await readFile(file, 'utf8'), STATIC_CONFIG);
});

test('DELETE /api/plugins/remove: 404 not present, 503 without a path, 409 for invalid YAML, 422 for bad or missing targets', async (t) => {
  const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG });
  assertError(
    t,
    await call(app, { method: 'DELETE', url: '/api/plugins/remove', payload: { key: 'nothing' } }),
    404,
    'not_found',
  );
  assertError(
    t,
    await call(app, { method: 'DELETE', url: '/api/plugins/remove', payload: { module_name: 'github.com/no/body' } }),
    404,
    'not_found',
  );
  assertError(t, await call(app, { method: 'DELETE', url: '/api/plugins/remove' }), 422, 'validation_failed');
  assertError(
    t,
    await call(app, { method: 'DELETE', url: '/api/plugins/remove', payload: {} }),
    422,
    'validation_failed',
  );
  assertError(
    t,
    await call(app, { method: 'DELETE', url: '/api/plugins/remove', payload: { key: '../x' } }),
    422,
    'validation_failed',
  );
  assertError(t, await call(app, { method: 'DELETE', url: '/api/plugins/remove?key=-x' }), 422, 'validation_failed');
  t.is(await readFile(file, 'utf8'), STATIC_CONFIG);

  const unset = await pluginsApp(t, { text: null });
  assertError(
    t,
    await call(unset.app, { method: 'DELETE', url: '/api/plugins/remove', payload: { key: 'badger' } }),
    503,
    'not_configured',
  );
  const invalid = await pluginsApp(t, { text: 'experimental:\n  plugins: {badger: \n' });
  const err = assertError(
    t,
    await call(invalid.app, { method: 'DELETE', url: '/api/plugins/remove', payload: { key: 'badger' } }),
    409,
    'conflict',
  );
  t.true(err.details[0].path.startsWith(`${invalid.file}:`));
});
