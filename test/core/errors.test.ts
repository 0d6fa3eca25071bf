import test from 'ava';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import type { BuiltinGroup } from '../../core/types.ts';
import { builtinGroups } from '../../plugins/index.ts';

/** A test-only group with a body-validated route and a route that throws. */
const probeGroup: BuiltinGroup = {
  name: 'probe',
  plugin: async (app: FastifyInstance) => {
    app.post(
      '/api/probe',
      {
        config: { auth: 'public' },
        schema: {
          body: Type.Object(
            { name: Type.String({ minLength: 1 }), count: Type.Optional(Type.Integer({ minimum: 0 })) },
            { additionalProperties: false },
          ),
        },
      },
      async (request) => ({ received: request.body }),
    );
    app.post(
      '/api/probe/optional',
      {
        config: { auth: 'public' },
        schema: {
          body: Type.Optional(Type.Object({ note: Type.Optional(Type.String()) }, { additionalProperties: false })),
        },
      },
      async (request) => ({ received: request.body ?? null }),
    );
    app.get('/api/probe/boom', { config: { auth: 'public' } }, async () => {
      throw new Error('secret internal detail /etc/passwd');
    });
  },
};

const open = (t: Parameters<typeof build>[0], config: Record<string, unknown> = {}) =>
  build(t, { groups: [...builtinGroups, probeGroup], config: { auth: { mode: 'off' }, ...config } });

test('unknown route answers 404 not_found in JSON', async (t) => {
  const app = await open(t);
  const res = await app.inject({ method: 'GET', url: '/api/nothing-here' });
  t.is(res.statusCode, 404);
  t.regex(res.headers['content-type'] as string, /^application\/json/);
  t.is(res.json().id, 'not_found');
  t.is(typeof res.json().message, 'string');
});

test('a known path with a wrong method answers 405 with Allow', async (t) => {
  const app = await open(t);
  const res = await app.inject({ method: 'DELETE', url: '/api/health' });
  t.is(res.statusCode, 405);
  t.is(res.json().id, 'method_not_allowed');
  t.is(res.headers.allow, 'GET, HEAD');
});

test('unparsable JSON answers 400 invalid_json', async (t) => {
  const app = await open(t);
  const res = await app.inject({
    method: 'POST',
    url: '/api/probe',
    headers: { 'content-type': 'application/json' },
    payload: '{"name": "x",',
  });
  t.is(res.statusCode, 400);
  t.deepEqual(Object.keys(res.json()).sort(), ['id', 'message']);
  t.is(res.json().id, 'invalid_json');
});

test('a schema failure answers 422 validation_failed with details[{path, message}]', async (t) => {
  const app = await open(t);
  const res = await app.inject({ method: 'POST', url: '/api/probe', payload: { name: 'x', count: -1 } });
  t.is(res.statusCode, 422);
  t.is(res.json().id, 'validation_failed');
  t.deepEqual(res.json().details, [{ path: '/count', message: 'must be >= 0 (received number -1)' }]);
  const missing = await app.inject({ method: 'POST', url: '/api/probe', payload: {} });
  t.is(missing.statusCode, 422);
  t.deepEqual(missing.json().details[0].path, '/name');
});

test('a missing required body answers 422; all-optional bodies accept no body', async (t) => {
  const app = await open(t);
  const none = await app.inject({ method: 'POST', url: '/api/probe' });
  t.is(none.statusCode, 422);
  t.is(none.json().id, 'validation_failed');
  const optional = await app.inject({ method: 'POST', url: '/api/probe/optional' });
  t.is(optional.statusCode, 200);
  const emptyJson = await app.inject({
    method: 'POST',
    url: '/api/probe/optional',
    headers: { 'content-type': 'application/json', 'content-length': '0' },
  });
  t.is(emptyJson.statusCode, 200);
});

test('unknown top-level body fields are dropped before validation', async (t) => {
  const app = await open(t);
  const res = await app.inject({ method: 'POST', url: '/api/probe', payload: { name: 'x', extra: true } });
  t.is(res.statusCode, 200);
  t.deepEqual(res.json().received, { name: 'x' });
});

test('a body over the limit answers 413 payload_too_large', async (t) => {
  const app = await open(t, { server: { body_limit: 2048 } });
  const res = await app.inject({ method: 'POST', url: '/api/probe', payload: { name: 'x'.repeat(5000) } });
  t.is(res.statusCode, 413);
  t.is(res.json().id, 'payload_too_large');
});

test('a body that is not JSON answers 415 unsupported_media_type', async (t) => {
  const app = await open(t);
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/probe',
      headers: { 'content-type': type },
      payload: 'name=x',
    });
    t.is(res.statusCode, 415, type);
    t.is(res.json().id, 'unsupported_media_type');
  }
  const charset = await app.inject({
    method: 'POST',
    url: '/api/probe',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    payload: '{"name":"é"}',
  });
  t.is(charset.statusCode, 200);
});

test('an unexpected throw answers 500 internal with the text hidden and the request id given', async (t) => {
  const app = await open(t);
  const res = await app.inject({ method: 'GET', url: '/api/probe/boom', headers: { 'x-request-id': 'trace-42' } });
  t.is(res.statusCode, 500);
  t.deepEqual(res.json(), { id: 'internal', message: 'internal error (request trace-42)' });
  t.false(res.body.includes('passwd'));
});

test('a query value failing its pattern answers 422 with a /query pointer', async (t) => {
  const app = await open(t);
  const res = await app.inject({ method: 'GET', url: '/api/health?deep=maybe' });
  t.is(res.statusCode, 422);
  t.is(res.json().details[0].path, '/query/deep');
});

test('an over-long path parameter or a bad percent-encoding answers 422 in the JSON format', async (t) => {
  const app = await open(t);
  for (const url of [`/api/auth/tokens/${'a'.repeat(300)}`, '/api/auth/tokens/%E0%A4%A']) {
    const res = await app.inject({ method: 'DELETE', url });
    t.is(res.statusCode, 422, url);
    t.is(res.json().id, 'validation_failed');
    t.is(res.headers['api-version'], '1');
  }
});
