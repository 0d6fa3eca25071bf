/**
 * Ids of own resources (API.md §4.24 "Errors", §2 ids): a taken `id` is 409 `already_exists`; without
 * `id`, a name whose slug is taken gets `-2` (docs/API.md said 409 for both).
 */
import test from 'ava';
import { assertClientError, call, harness } from './support.ts';

test('POST /api/resources: a taken slug of the name gets -2, a taken explicit id is 409', async (t) => {
  const { app } = await harness(t);
  const post = (payload: Record<string, unknown>) => call(app, { method: 'POST', url: '/api/resources', payload });
  const first = await post({ name: 'Whoami', hosts: ['a.test'], servers: ['http://10.0.0.5'] });
  t.is(first.status, 201, first.raw);
  t.is(first.body.id, 'whoami');
  const second = await post({ name: 'whoami', hosts: ['b.test'], servers: ['http://10.0.0.6'] });
  t.is(second.status, 201, second.raw);
  t.like(second.body, { id: 'whoami-2', name: 'whoami', service_id: 'whoami-2-service' });
  assertClientError(
    t,
    await post({ id: 'whoami', name: 'Other', hosts: ['c.test'], servers: ['http://10.0.0.7'] }),
    409,
    'already_exists',
  );
  t.is((await call(app, { url: '/api/resources/other' })).status, 404);
});
