import test from 'ava';
import { buildApp, call } from './support.ts';

test('the OpenAPI document describes the middlewares and services routes', async (t) => {
  const app = await buildApp(t);
  const doc = await call(app, { method: 'GET', url: '/api/openapi.json' });
  t.is(doc.status, 200);
  for (const route of ['/api/middlewares', '/api/middlewares/{id}', '/api/services', '/api/services/{id}'])
    t.truthy(doc.body.paths[route], route);
  t.truthy(doc.body.paths['/api/middlewares'].post.responses['201']);
  t.truthy(doc.body.paths['/api/services/{id}'].delete.responses['204']);
});
