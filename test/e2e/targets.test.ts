/**
 * Provider targets (API.md §4.9, docs/API.md "Provider targets") through two real Traefik
 * instances: each polls its own target URL and routes only that target's resources; the other
 * instance's hosts answer 404 there. A target's appended middleware acts on its instance only, and
 * a change of a target's selection reaches its instance.
 */
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { PROVIDER_TOKEN, startStackManager, type StackManager } from '../helpers/traefik-stack.ts';
import {
  pangolinDocument,
  startBackend,
  startFakePangolin,
  startTraefik,
  traefikTest,
  TRAEFIK_BIN,
  type Traefik,
} from '../helpers/traefik.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let sm: StackManager;
let edgeA: Traefik;
let edgeB: Traefik;

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  const context = hook.context(t);
  const [a, b] = await Promise.all([startBackend(context, 'a'), startBackend(context, 'b')]);
  const pangolin = await startFakePangolin(
    context,
    pangolinDocument([
      { id: 1, name: 'alpha', host: 'alpha.test', backends: [a] },
      { id: 2, name: 'beta', host: 'beta.test', backends: [b] },
      { id: 3, name: 'gamma', host: 'gamma.test', backends: [b] },
    ]),
  );
  sm = await startStackManager(context, { pangolinUrl: pangolin.url });

  const middleware = await sm.call('POST', '/api/middlewares', {
    name: 'Edge A mark',
    type: 'headers',
    config: { customResponseHeaders: { 'X-Edge': 'a' } },
  });
  if (middleware.status !== 201) throw new Error(`middleware: ${middleware.status} ${middleware.text}`);
  const targets = [];
  for (const body of [
    { name: 'edge-a', include: { hosts: ['alpha.test'] }, middlewares: [middleware.json.id] },
    // by resource id and by host glob, one excluded
    {
      name: 'edge-b',
      include: { resources: ['2-beta-router'], hosts: ['*.test'] },
      exclude: { hosts: ['alpha.test'] },
    },
  ]) {
    const created = await sm.call('POST', '/api/proxy-config/targets', body);
    if (created.status !== 201) throw new Error(`target: ${created.status} ${created.text}`);
    targets.push(created.json);
  }
  const base = new URL(sm.providerUrl).origin;
  [edgeA, edgeB] = await Promise.all(
    targets.map((target) => startTraefik(context, { providerUrl: base + target.url, token: PROVIDER_TOKEN })),
  );
});

const websecure = (host: string) => ({ entryPoint: 'websecure', host, path: '/t' });

e2e('each Traefik routes only its target’s resources; the other’s hosts answer 404 there', async (t) => {
  const routersA = await edgeA.waitForRouters(['1-alpha-router', '1-alpha-router-redirect']);
  const routersB = await edgeB.waitForRouters(['2-beta-router', '2-beta-router-redirect', '3-gamma-router']);
  t.true([...routersA, ...routersB].every((router) => router.status === 'enabled'));

  const alpha = await edgeA.waitForReply(websecure('alpha.test'), (r) => r.status === 200);
  t.is(alpha.json.backend, 'a');
  t.is(alpha.json.headers.host, 'alpha.test');
  const beta = await edgeB.waitForReply(websecure('beta.test'), (r) => r.status === 200);
  t.is(beta.json.backend, 'b');
  t.is((await edgeB.request(websecure('gamma.test'))).status, 200);

  // each instance has no router for the other's hosts: Traefik's own 404
  for (const host of ['beta.test', 'gamma.test']) t.is((await edgeA.request(websecure(host))).status, 404, host);
  t.is((await edgeB.request(websecure('alpha.test'))).status, 404);
  // the -redirect companions follow their resource (web → websecure on the owning instance only)
  const redirect = await edgeA.request({ host: 'alpha.test', path: '/r' });
  t.is(redirect.headers.location, 'https://alpha.test/r');
  t.is((await edgeB.request({ host: 'alpha.test', path: '/r' })).status, 404);
  t.is((await edgeB.request({ host: 'beta.test', path: '/r' })).headers.location, 'https://beta.test/r');

  // Traefik's own view: A lists none of B's routers and the other way round
  const names = async (traefik: Traefik) =>
    ((await traefik.api('/api/http/routers?per_page=1000')) as Array<{ name: string; provider: string }>)
      .filter((router) => router.provider === 'http')
      .map((router) => router.name)
      .sort();
  t.deepEqual(await names(edgeA), ['1-alpha-router-redirect@http', '1-alpha-router@http']);
  t.deepEqual(await names(edgeB), [
    '2-beta-router-redirect@http',
    '2-beta-router@http',
    '3-gamma-router-redirect@http',
    '3-gamma-router@http',
  ]);
});

e2e('a target’s appended middleware acts on its own instance only', async (t) => {
  const alpha = await edgeA.waitForReply(websecure('alpha.test'), (r) => r.status === 200);
  t.is(alpha.headers['x-edge'], 'a');
  const beta = await edgeB.waitForReply(websecure('beta.test'), (r) => r.status === 200);
  t.is(beta.headers['x-edge'], undefined);
});

e2e('a change of a target’s selection reaches its Traefik; the other instance is unchanged', async (t) => {
  const current = await sm.call('GET', '/api/proxy-config/targets/edge-a');
  const { include, exclude, entrypoints, middlewares, name, description } = current.json;
  const updated = await sm.call(
    'PUT',
    '/api/proxy-config/targets/edge-a',
    {
      name,
      description,
      include: { ...include, hosts: [...include.hosts, 'gamma.test'] },
      exclude,
      entrypoints,
      middlewares,
    },
    { 'if-match': current.headers.etag as string },
  );
  t.is(updated.status, 200, updated.text);
  const gamma = await edgeA.waitForReply(websecure('gamma.test'), (r) => r.status === 200);
  t.is(gamma.json.backend, 'b');
  t.is(gamma.headers['x-edge'], 'a', 'the target middleware is appended to the newly selected router');
  t.is((await edgeA.request(websecure('beta.test'))).status, 404);
  t.is((await edgeB.request(websecure('gamma.test'))).status, 200);
  t.is((await edgeB.request(websecure('alpha.test'))).status, 404);
  // our status sees both instances polling, each current on its own document
  const status = (await sm.call('GET', '/api/proxy-config/status')).json;
  for (const id of ['edge-a', 'edge-b']) {
    const document = status.targets.find((target: { id: string }) => target.id === id);
    t.true(
      document.instances.some((instance: { user_agent: string }) => instance.user_agent.startsWith('Go-http-client')),
      id,
    );
  }
});

e2e('neither Traefik logged an error about the documents it got', (t) => {
  for (const [name, traefik] of [
    ['edge-a', edgeA],
    ['edge-b', edgeB],
  ] as const) {
    t.deepEqual(
      traefik
        .log()
        .split('\n')
        .filter((line) => / ERR /.test(line)),
      [],
      name,
    );
  }
});
