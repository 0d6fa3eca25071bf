/** The version gate through the API (API.md §4.9 G14): per-target versions, ETags, Status, 422 and warnings. */
import test from 'ava';
import { waitFor } from '../helpers/wait.ts';
import { targetHarness } from './targets-support.ts';

const passive = {
  name: 'Passive',
  type: 'loadBalancer',
  config: { servers: [{ url: 'http://10.0.0.9:80' }], passiveHealthCheck: { maxFailedAttempts: 3 } },
};

test('each document is gated for its Traefik: the default (unknown version) keeps a 3.6 key, a 3.5.3 target drops it, with its own ETag', async (t) => {
  // no Traefik to read the version from
  const h = await targetHarness(t, { traefikUrl: 'http://127.0.0.1:9' });
  const created = await h.call('POST', '/api/services', passive);
  t.is(created.status, 201, created.text);
  const id = created.json.id as string;
  t.true(
    created.json.warnings.some((w: string) => w.includes('version is unknown')),
    created.text,
  );
  for (const [name, version] of [
    ['Old edge', '3.5.3'],
    ['New edge', 'v3.7.15'],
  ]) {
    const target = await h.call('POST', '/api/proxy-config/targets', { name, traefik_version: version });
    t.is(target.status, 201, target.text);
    t.is(target.json.traefik_version, version);
  }
  const body = (res: { text: string }) => JSON.parse(res.text);
  const fetchDoc = (path: string) =>
    waitFor(async () => {
      const res = await h.call('GET', path);
      return res.status === 200 && res.text.includes(`"${id}"`) ? res : null;
    }, 2000);
  const [main, old, recent] = await Promise.all([
    fetchDoc('/api/v1/proxy-config'),
    fetchDoc('/api/v1/proxy-config/old-edge'),
    fetchDoc('/api/v1/proxy-config/new-edge'),
  ]);
  t.like(body(main).http.services[id].loadBalancer, { passiveHealthCheck: { maxFailedAttempts: 3 } });
  t.like(body(recent).http.services[id].loadBalancer, { passiveHealthCheck: { maxFailedAttempts: 3 } });
  t.deepEqual(body(old).http.services[id], { loadBalancer: { servers: [{ url: 'http://10.0.0.9:80' }] } });
  t.not(old.headers.etag, recent.headers.etag);
  const status = await h.call('GET', '/api/proxy-config/status');
  t.deepEqual(status.json.dropped_keys, []);
  t.like(status.json.traefik_version, { version: null, source: null });
  const byId = new Map(status.json.targets.map((e: { id: string }) => [e.id, e]));
  t.like(byId.get('old-edge'), {
    traefik_version: '3.5.3',
    dropped_keys: [{ path: `/http/services/${id}/loadBalancer`, key: 'passiveHealthCheck', min_version: '3.6.0' }],
  });
  t.like(byId.get('new-edge'), { traefik_version: 'v3.7.15', dropped_keys: [] });
  // a malformed version is refused
  const bad = await h.call('POST', '/api/proxy-config/targets', { name: 'Bad', traefik_version: 'latest' });
  t.is(bad.status, 422, bad.text);
});

test('the default document follows proxy.traefik_version; keys no version has are refused', async (t) => {
  const h = await targetHarness(t, { config: { proxy: { traefik_version: '3.5.3' } } });
  const created = await h.call('POST', '/api/services', passive);
  t.is(created.status, 201, created.text);
  t.true(
    created.json.warnings.some((w: string) => w.includes('Traefik 3.5.3 cannot')),
    created.text,
  );
  await waitFor(async () => {
    const status = await h.call('GET', '/api/proxy-config/status');
    return status.json.dropped_keys.length === 1 ? status : null;
  }, 2000);
  const doc = await h.call('GET', '/api/v1/proxy-config');
  t.false(doc.text.includes('passiveHealthCheck'));
  const status = await h.call('GET', '/api/proxy-config/status');
  t.like(status.json.traefik_version, { version: '3.5.3', source: 'setting' });

  const sticky = await h.call('POST', '/api/services', {
    name: 'Sticky tcp',
    protocol: 'tcp',
    type: 'loadBalancer',
    config: { servers: [{ address: '10.0.0.9:5432' }], sticky: { cookie: {} } },
  });
  t.is(sticky.status, 422, sticky.text);
  t.true(
    sticky.json.details.some(
      (d: { path: string; message: string }) => d.path === '/config/sticky' && d.message.includes('no Traefik version'),
    ),
  );
  const retry = await h.call('POST', '/api/middlewares', {
    name: 'Retry',
    type: 'retry',
    config: { attempts: 2, timeout: '5s' },
  });
  t.is(retry.status, 201, retry.text);
  t.true(
    retry.json.warnings.some((w: string) => w.startsWith('config/timeout is decoded by Traefik 3.7.0')),
    retry.text,
  );
});

test("without the setting, the version is read from the Traefik source's /api/version", async (t) => {
  const h = await targetHarness(t); // the fake Traefik answers Version 3.6.24 (fixtures/traefik-api/version.json)
  const status = await waitFor(async () => {
    const res = await h.call('GET', '/api/proxy-config/status');
    return res.json.traefik_version.version ? res : null;
  }, 2000);
  t.like(status.json.traefik_version, { version: '3.6.24', source: 'traefik', error: null });
  t.truthy(status.json.traefik_version.start_date);
  const created = await h.call('POST', '/api/middlewares', {
    name: 'Retry',
    type: 'retry',
    config: { attempts: 2, timeout: '5s' },
  });
  t.true(
    created.json.warnings.some((w: string) => w.includes('Traefik 3.6.24 cannot')),
    created.text,
  );
  await waitFor(async () => {
    const res = await h.call('GET', '/api/proxy-config/status');
    return res.json.dropped_keys.some((d: { key: string }) => d.key === 'timeout') || null;
  }, 2000);
});
