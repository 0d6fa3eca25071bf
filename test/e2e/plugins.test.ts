/**
 * Traefik plugins (API.md §4.6) with a real Traefik: a plugin installed through our API into the
 * Traefik's real static config file is downloaded (from a loopback stand-in of the plugin registry)
 * and loaded when Traefik restarts, a middleware using it takes effect through Traefik, and the
 * plugin's `status` in our API is what Traefik's API says: `error` with Traefik's text before the
 * restart, `loaded` after.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { startPluginRegistry } from '../helpers/plugin-registry.ts';
import { startStack } from '../helpers/traefik-stack.ts';
import { traefikTest } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const MODULE = 'github.com/stack-manager-e2e/plugin-stamp';
const VERSION = 'v0.1.0';
const STAMP_SOURCE = path.resolve(import.meta.dirname, '..', 'fixtures', 'traefik-plugins', 'stamp');

e2e('a plugin installed through the API loads after Traefik restarts; its status comes from Traefik', async (t) => {
  const registry = await startPluginRegistry(t, { [MODULE]: { version: VERSION, source: STAMP_SOURCE } });
  const { sm, traefik } = await startStack(t, { traefik: { env: registry.env } });
  const staticFile = path.join(traefik.dir, 'traefik.yml');
  // our API edits the test Traefik's own static file; the explorer reads its API
  t.is((await sm.call('PUT', '/api/plugins/configpath', { path: staticFile })).status, 200);
  const source = await sm.call('PUT', '/api/datasource/traefik', { type: 'traefik', url: traefik.apiBase });
  t.true([200, 201].includes(source.status), source.text);

  // the badger stub of the generated file is listed, loaded: Pangolin's badger@http is enabled in Traefik
  const before = await sm.call('GET', '/api/plugins');
  t.is(before.status, 200, before.text);
  t.like(
    before.json.find((plugin: { key: string }) => plugin.key === 'badger'),
    { local: true, status: 'loaded' },
  );

  const install = await sm.call('POST', '/api/plugins/install', {
    module_name: MODULE,
    version: VERSION,
    key: 'stamp',
  });
  t.is(install.status, 201, install.text);
  t.is(install.headers['x-restart-required'], 'true');
  const written = parse(await readFile(staticFile, 'utf8'));
  t.deepEqual(written.experimental.plugins.stamp, { moduleName: MODULE, version: VERSION });
  t.truthy(written.experimental.localPlugins.badger, 'the edit keeps the other entries');

  // a middleware of the plugin, assigned to the resource, before Traefik has the plugin
  const created = await sm.call('POST', '/api/middlewares', {
    id: 'stamp-it',
    name: 'stamp it',
    type: 'plugin',
    config: { stamp: { value: 'stamped-by-e2e' } },
  });
  t.is(created.status, 201, created.text);
  const assigned = await sm.call('POST', '/api/resources/1-app-router/middlewares', { middleware_id: 'stamp-it' });
  t.is(assigned.status, 200, assigned.text);
  // Traefik disables the router using a middleware of a plugin it did not load…
  await traefik.waitForReply({ entryPoint: 'websecure', host: 'app.test' }, (r) => r.status === 404);
  const [middleware] = await waitFor(async () => {
    const list = await traefik.apiList('/api/http/middlewares');
    const found = list.find((m: { name: string }) => m.name === 'stamp-it@http');
    return found ? [found] : null;
  }, 3_000);
  t.is(middleware.status, 'disabled');
  t.log('Traefik:', middleware.error);
  // …and our API says `error` with Traefik's own words
  const broken = await waitFor(async () => {
    const list = (await sm.call('GET', '/api/plugins')).json as Array<{ key: string; status: string }>;
    const stamp = list.find((plugin) => plugin.key === 'stamp');
    return stamp?.status === 'error' ? stamp : null;
  }, 3_000);
  t.like(broken, { module_name: MODULE, version: VERSION, local: false, used_by: ['stamp-it'] });
  t.is((broken as any).error, middleware.error.join('; '));

  // Traefik loads plugins only at start: restart it; it downloads the plugin and the middleware works
  await traefik.restart();
  t.true(registry.requests.includes(`/public/download/${MODULE}/${VERSION}`), registry.requests.join(', '));
  t.true(registry.requests.includes(`/public/validate/${MODULE}/${VERSION}`), registry.requests.join(', '));
  const reply = await traefik.waitForReply(
    { entryPoint: 'websecure', host: 'app.test', path: '/p' },
    (r) => r.status === 200,
  );
  t.is(reply.headers['x-stamp'], 'stamped-by-e2e');
  t.is(reply.json.headers['x-stamp'], 'stamped-by-e2e');
  t.regex(traefik.log(), /Plugins loaded/);

  const loaded = await waitFor(async () => {
    const list = (await sm.call('GET', '/api/plugins')).json as Array<{ key: string; status: string }>;
    const stamp = list.find((plugin) => plugin.key === 'stamp');
    return stamp?.status === 'loaded' ? stamp : null;
  }, 3_000);
  t.like(loaded, { key: 'stamp', status: 'loaded', error: null, used_by: ['stamp-it'] });
});
