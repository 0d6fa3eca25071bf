/**
 * Switching to data source mode `none` after the upstream failed (API.md §4.24): nothing is polled
 * any more, so the document is current, not the failing source's stale last good one.
 */
import test from 'ava';
import { call, harness } from './support.ts';

test('PUT active none after a failed sync: the document and the status are no longer stale', async (t) => {
  const { app, fake } = await harness(t);
  fake.state.fault = '500';
  const failed = await app.resources.syncNow();
  t.false(failed.ok);
  const before = await call(app, { url: '/api/proxy-config/status' });
  t.like(before.body, { status: 'degraded', mode: 'pangolin', stale: true });
  t.is((await call(app, { url: '/api/v1/proxy-config' })).headers['x-config-stale'], 'true');

  const switched = await call(app, { method: 'PUT', url: '/api/datasource/active', payload: { name: 'none' } });
  t.is(switched.status, 204, switched.raw);
  const after = await call(app, { url: '/api/proxy-config/status' });
  t.like(after.body, { status: 'ok', mode: 'none', stale: false, upstream: { source: null } });
  const doc = await call(app, { url: '/api/v1/proxy-config' });
  t.is(doc.status, 200);
  t.is(doc.headers['x-config-stale'], undefined);
});
