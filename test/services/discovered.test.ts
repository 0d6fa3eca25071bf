import test from 'ava';
import type { DiscoveredService } from '../../model/upstream-state.ts';
import { assertClientError, buildApp, call, fakeReferences, snapshot } from '../middlewares/support.ts';

const discovered: DiscoveredService[] = [
  {
    id: 'app-service',
    name: 'app-service',
    protocol: 'http',
    type: 'loadBalancer',
    config: { servers: [{ url: 'http://10.0.0.5:8080' }] },
    provider: 'http',
    upstream_name: 'app-service@http',
    status: 'active',
  },
  {
    id: 'ssh',
    name: 'ssh',
    protocol: 'tcp',
    type: 'loadBalancer',
    config: { servers: [{ address: '10.0.0.6:22' }] },
    provider: 'docker',
    upstream_name: 'ssh@docker',
    status: 'disabled',
  },
];
const snapshotBody = {
  http: {
    services: {
      'app-service': { loadBalancer: { servers: [{ url: 'http://10.0.0.5:8080' }] } },
      'upstream-only': { loadBalancer: { servers: [{ url: 'http://x' }] } },
    },
  },
};

async function withDiscovered(t: Parameters<typeof buildApp>[0]) {
  const app = await buildApp(t);
  app.upstream.update(
    { mode: 'pangolin', source: 'pangolin', body: snapshotBody, hash: 'h', fetched_at: '2025-01-08T13:27:03.200Z' },
    discovered,
  );
  return app;
}

test('discovered services are merged into GET lists and reads, read-only and filterable', async (t) => {
  const app = await withDiscovered(t);
  await call(app, {
    method: 'POST',
    url: '/api/services',
    payload: { id: 'mine', name: 'Mine', type: 'loadBalancer', config: { servers: [{ url: 'http://m' }] } },
  });
  const all = await call(app, { method: 'GET', url: '/api/services' });
  t.deepEqual(
    all.body.map((s: { id: string; source: string }) => [s.id, s.source]),
    [
      ['app-service', 'discovered'],
      ['mine', 'manual'],
      ['ssh', 'discovered'],
    ],
  );
  const one = await call(app, { method: 'GET', url: '/api/services/app-service' });
  t.like(one.body, {
    id: 'app-service',
    source: 'discovered',
    status: 'active',
    provider: 'http',
    upstream_name: 'app-service@http',
    description: '',
    created_at: '2025-01-08T13:27:03.200Z',
  });
  t.is(one.headers.etag, `"${one.body.etag}"`);
  t.regex(one.body.etag, /^[0-9a-f]{32}$/);
  t.is(
    (
      await app.inject({
        method: 'GET',
        url: '/api/services/app-service',
        headers: { 'if-none-match': one.headers.etag as string },
      })
    ).statusCode,
    304,
  );

  const ids = async (query: string) =>
    (await call(app, { method: 'GET', url: `/api/services${query}` })).body.map((s: { id: string }) => s.id);
  t.deepEqual(await ids('?source=discovered'), ['app-service', 'ssh']);
  t.deepEqual(await ids('?status=disabled'), ['ssh']);
  t.deepEqual(await ids('?status=active&source=discovered'), ['app-service']);
  t.deepEqual(await ids('?protocol=tcp'), ['ssh']);
  t.deepEqual(await ids('?q=SS'), ['ssh']);
  t.deepEqual(app.servicesView.get('ssh')?.source, 'discovered');

  const before = await snapshot(app.store.dataDir);
  const put = await call(app, {
    method: 'PUT',
    url: '/api/services/app-service',
    payload: { name: 'x', type: 'loadBalancer', config: { servers: [{ url: 'http://y' }] } },
  });
  assertClientError(t, put, 409, 'read_only');
  assertClientError(t, await call(app, { method: 'DELETE', url: '/api/services/ssh' }), 409, 'read_only');
  t.deepEqual(await snapshot(app.store.dataDir), before);

  // a discovered service may be assigned by resources: used_by comes from reference sources
  app.services.addReferenceSource(fakeReferences({ 'app-service': ['/api/resources/app'] }).source);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/services/app-service' })).body.used_by, [
    '/api/resources/app',
  ]);
});

test('POST answers 409 for a discovered id or an upstream service key; derived ids step around them', async (t) => {
  const app = await withDiscovered(t);
  const base = { type: 'loadBalancer', config: { servers: [{ url: 'http://m' }] } };
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/services', payload: { ...base, id: 'app-service', name: 'A' } }),
    409,
    'already_exists',
  );
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/services', payload: { ...base, id: 'upstream-only', name: 'B' } }),
    409,
    'already_exists',
  );
  t.is(
    (await call(app, { method: 'POST', url: '/api/services', payload: { ...base, name: 'App Service' } })).body.id,
    'app-service-2',
  );
  t.is(
    (await call(app, { method: 'POST', url: '/api/services', payload: { ...base, name: 'Upstream only' } })).body.id,
    'upstream-only-2',
  );
  // references to discovered services must use name@provider
  const ref = await call(app, {
    method: 'POST',
    url: '/api/services',
    payload: { name: 'W', type: 'weighted', config: { services: [{ name: 'ssh', weight: 1 }] } },
  });
  assertClientError(t, ref, 422, 'validation_failed');
  t.is(
    (
      await call(app, {
        method: 'POST',
        url: '/api/services',
        payload: { name: 'W', type: 'weighted', config: { services: [{ name: 'app-service@http', weight: 1 }] } },
      })
    ).status,
    201,
  );
});

test('discovered services disappear after a sync without them', async (t) => {
  const app = await withDiscovered(t);
  t.is((await call(app, { method: 'GET', url: '/api/services' })).body.length, 2);
  app.upstream.update(null, []);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/services' })).body, []);
  assertClientError(t, await call(app, { method: 'GET', url: '/api/services/ssh' }), 404, 'not_found');
});
