import test from 'ava';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { assertError, call, pluginMiddleware, pluginsApp, STATIC_CONFIG } from './support.ts';

test('GET /api/plugins lists plugins and localPlugins by key, with used_by and status loaded from the fake Traefik', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const { app } = await pluginsApp(t, { text: STATIC_CONFIG, traefikUrl: fake.url });
  const bouncer = await pluginMiddleware(t, app, 'Bouncer', 'crowdsec');
  const r = await call(app, { url: '/api/plugins' });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.headers['x-total-count'], '3');
  t.deepEqual(r.body, [
    {
      key: 'badger',
      module_name: 'github.com/fosrl/badger',
      version: 'v1.2.0',
      local: false,
      status: 'loaded',
      error: null,
      used_by: [],
      vendored: null,
    },
    {
      key: 'crowdsec',
      module_name: 'github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin',
      version: 'v1.4.4',
      local: false,
      status: 'loaded',
      error: null,
      used_by: [bouncer],
      vendored: null,
    },
    {
      key: 'myplugin',
      module_name: 'github.com/me/myplugin',
      version: null,
      local: true,
      status: 'configured',
      error: null,
      used_by: [],
      vendored: null,
    },
  ]);
});

test("GET /api/plugins reports error with Traefik's text for a plugin whose middleware is in error", async (t) => {
  const traefik = Fastify({ logger: false });
  traefik.get('/api/http/middlewares', async (_request, reply) =>
    reply.header('x-next-page', '1').send([
      { name: 'badger@http', provider: 'http', type: 'badger', status: 'enabled', plugin: { badger: {} } },
      {
        name: 'bouncer@file',
        provider: 'file',
        type: 'crowdsec',
        status: 'disabled',
        error: ['plugin: unknown plugin type: crowdsec'],
        plugin: { crowdsec: {} },
      },
    ]),
  );
  await traefik.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => traefik.close());
  const url = `http://127.0.0.1:${(traefik.server.address() as AddressInfo).port}`;
  const { app } = await pluginsApp(t, { text: STATIC_CONFIG, traefikUrl: url });
  const r = await call(app, { url: '/api/plugins' });
  t.is(r.status, 200, JSON.stringify(r.body));
  const byKey = Object.fromEntries(r.body.map((p: any) => [p.key, p]));
  t.like(byKey.badger, { status: 'loaded', error: null });
  t.like(byKey.crowdsec, { status: 'error', error: 'plugin: unknown plugin type: crowdsec' });
  t.like(byKey.myplugin, { status: 'configured', error: null });
});

test('GET /api/plugins answers configured for every plugin when Traefik is unreachable', async (t) => {
  const { app } = await pluginsApp(t, { text: STATIC_CONFIG });
  const r = await call(app, { url: '/api/plugins' });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(
    r.body.map((p: any) => [p.key, p.status, p.error]),
    [
      ['badger', 'configured', null],
      ['crowdsec', 'configured', null],
      ['myplugin', 'configured', null],
    ],
  );
});

test('GET /api/plugins answers 503 not_configured without a static config path', async (t) => {
  const { app } = await pluginsApp(t, { text: null });
  assertError(t, await call(app, { url: '/api/plugins' }), 503, 'not_configured');
});

test('GET /api/plugins answers [] for a missing file and 409 conflict with <file>:<line> for invalid YAML', async (t) => {
  const { app, file } = await pluginsApp(t);
  const empty = await call(app, { url: '/api/plugins' });
  t.is(empty.status, 200);
  t.deepEqual(empty.body, []);
  await writeFile(file, 'experimental:\n  plugins:\n    a: [unclosed\n');
  const body = assertError(t, await call(app, { url: '/api/plugins' }), 409, 'conflict');
  t.regex(body.details[0].path, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+$`));
  t.false(body.message.includes('\n'));
});

test('GET /api/plugins/:name/usage lists middlewares using the key; 404 for an unknown key; 422 for a bad key', async (t) => {
  const { app } = await pluginsApp(t, { text: STATIC_CONFIG });
  const id = await pluginMiddleware(t, app, 'Geo', 'geoblock');
  const used = await call(app, { url: '/api/plugins/geoblock/usage' });
  t.is(used.status, 200, JSON.stringify(used.body));
  t.deepEqual(used.body, {
    key: 'geoblock',
    module_name: null,
    installed: false,
    used_by: [{ middleware_id: id, resources: [] }],
  });
  const declared = await call(app, { url: '/api/plugins/badger/usage' });
  t.deepEqual(declared.body, { key: 'badger', module_name: 'github.com/fosrl/badger', installed: true, used_by: [] });
  assertError(t, await call(app, { url: '/api/plugins/nothing/usage' }), 404, 'not_found');
  assertError(t, await call(app, { url: '/api/plugins/-bad/usage' }), 422, 'validation_failed');
});
