/**
 * applyPlan's rollback on the real groups (API.md §4.24 "all or nothing"): a plan whose last write
 * is refused by the resources routes (a bulk assignment of a middleware that does not exist: 422)
 * undoes the resource override, assignments, service and middleware written before it.
 */
import test from 'ava';
import { applyPlan } from '../../plugins/import/apply.ts';
import type { ImportPlan } from '../../plugins/import/types.ts';
import { writerFor } from '../../plugins/import/writer.ts';
import { defaultResourceConfig } from '../../model/types.ts';
import { call, harness } from '../resources/support.ts';

test('a refused resource write undoes the overrides, assignments and objects written before it', async (t) => {
  const { app } = await harness(t);
  const resource = () => call(app, { url: '/api/resources/1-nextcloud-router' }).then((r) => r.body);
  const before = await resource();
  const plan: ImportPlan = {
    middlewares: [
      { id: 'authelia', name: 'Authelia', type: 'forwardAuth', config: { address: 'http://authelia:9091' }, from: 'a' },
    ],
    services: [
      {
        id: 'backend',
        name: 'Backend',
        type: 'loadBalancer',
        protocol: 'http',
        config: { servers: [{ url: 'http://10.0.0.5' }] },
        from: 'b',
      },
    ],
    overrides: [
      {
        resource_id: '1-nextcloud-router',
        kind: 'headers',
        config: { request: { 'X-Imported': '1' } },
        from: 'r',
        previous: { ...defaultResourceConfig().headers },
      },
    ],
    assignments: [
      { resource_id: '1-nextcloud-router', kind: 'middleware', id: 'authelia', priority: 150, from: 'r' },
      { resource_id: '1-nextcloud-router', kind: 'service', id: 'backend', priority: null, from: 'r' },
      { resource_id: '1-nextcloud-router', kind: 'middleware', id: 'missing', priority: null, from: 'r' },
    ],
    skipped: [],
    warnings: [],
  };
  const error = await t.throwsAsync(applyPlan(plan, writerFor(app, { id: 'rollback-test', headers: {} }), app.log));
  t.regex(
    error!.message,
    /^import rolled back, nothing was kept: POST \/api\/resources\/1-nextcloud-router\/middlewares\/bulk: /,
  );
  // the middleware and service assignments before it are runs of their own, written: the third run failed
  t.regex(error!.message, /missing/);
  t.is((error as { statusCode?: number }).statusCode, 422);
  const after = await resource();
  t.deepEqual(
    { middlewares: after.middlewares, service_id: after.service_id, config: after.config },
    { middlewares: before.middlewares, service_id: before.service_id, config: before.config },
  );
  t.deepEqual((await call(app, { url: '/api/middlewares' })).body, []);
  t.is((await call(app, { url: '/api/services/backend' })).status, 404);
});
