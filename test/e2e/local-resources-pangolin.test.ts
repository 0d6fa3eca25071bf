/**
 * Own resources (API.md §4.24) next to Pangolin's routers, with a real Traefik 3.7: a local
 * resource made through the API is one more router of the document Traefik polls; Pangolin's
 * router keeps answering; an overlap with Pangolin's host at equal priority is warned about, and a
 * priority settles which router Traefik takes; both resources are `live`.
 */
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { traefikTest, TRAEFIK_BIN } from '../helpers/traefik.ts';
import { startLiveStack, waitForLive, type LiveStack } from './live-support.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: LiveStack;

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startLiveStack(hook.context(t), {
    backends: ['app', 'own'],
    resources: [{ id: 1, name: 'app', host: 'app.test', backends: ['app'] }],
  });
});

e2e('Pangolin mode: a local resource answers beside Pangolin’s router; both are live', async (t) => {
  const own = stack.backends.find((b) => b.name === 'own')!;
  const mw = await stack.sm.call('POST', '/api/middlewares', {
    id: 'own-stamp',
    name: 'Own stamp',
    type: 'headers',
    config: { customResponseHeaders: { 'X-Own': 'yes' } },
  });
  t.is(mw.status, 201, mw.text);
  const started = Date.now();
  const created = await stack.sm.call('POST', '/api/resources', {
    id: 'own',
    name: 'Own',
    hosts: ['own.test'],
    servers: [own.url],
    middlewares: [{ middleware_id: 'own-stamp' }],
  });
  t.is(created.status, 201, created.text);
  t.deepEqual(created.json.warnings, []);

  const reply = await stack.traefik.waitForReply(
    { entryPoint: 'websecure', host: 'own.test' },
    (r) => r.status === 200,
  );
  t.is(reply.json.backend, 'own');
  t.is(reply.headers['x-own'], 'yes');
  t.log(`local router answers ${((Date.now() - started) / 1000).toFixed(1)} s after POST`);
  const app = await stack.traefik.request({ entryPoint: 'websecure', host: 'app.test' });
  t.is(app.status, 200);
  t.is(app.json.backend, 'app');
  await waitForLive(stack, 'own', 'live', started);
  await waitForLive(stack, '1-app-router', 'live', started);

  // the same host as Pangolin's router at its priority: accepted, with a warning naming it
  const overlap = await stack.sm.call('PUT', '/api/resources/own', {
    name: 'Own',
    hosts: ['own.test', 'app.test'],
    servers: [own.url],
    priority: 100,
  });
  t.is(overlap.status, 200, overlap.text);
  t.is(overlap.json.warnings.length, 1, overlap.text);
  t.regex(overlap.json.warnings[0], /1-app-router@http/);
  // a higher priority settles it: Traefik sends app.test to the local router
  const higher = await stack.sm.call('PUT', '/api/resources/own/config/priority', { priority: 1000 });
  t.is(higher.status, 200, higher.text);
  t.deepEqual(higher.json.warnings, []);
  const taken = await stack.traefik.waitForReply(
    { entryPoint: 'websecure', host: 'app.test' },
    (r) => r.json?.backend === 'own',
  );
  t.is(taken.status, 200);
  t.deepEqual(higher.json.middlewares, [{ id: 'own-stamp', priority: 100 }]);
});
