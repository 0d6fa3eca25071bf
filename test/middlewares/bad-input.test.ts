import test from 'ava';
import { TraefikSchema } from '../../model/traefik-schema.ts';
import { assertClientError, buildApp, call, snapshot } from './support.ts';

const valid = { name: 'Auth', type: 'forwardAuth', config: { address: 'http://auth:9091' } };

test('bad bodies answer 4xx {id, message} with JSON Pointers and write nothing', async (t) => {
  const app = await buildApp(t);
  t.is((await call(app, { method: 'POST', url: '/api/middlewares', payload: { ...valid, id: 'keep' } })).status, 201);
  const before = await snapshot(app.store.dataDir);
  const post = (payload: unknown) => call(app, { method: 'POST', url: '/api/middlewares', payload: payload as object });
  const put = (payload: unknown) =>
    call(app, { method: 'PUT', url: '/api/middlewares/keep', payload: payload as object });

  for (const send of [post, put]) {
    assertClientError(t, await send({ ...valid, config: { address: 'http://a', bogus: 1 } }), 422, 'validation_failed');
    const unknown = await send({ ...valid, config: { address: 'http://a', bogus: 1 } });
    t.deepEqual(unknown.body.details, [
      { path: '/config/bogus', message: 'is not a known field of the forwardAuth middleware' },
    ]);
    t.is(unknown.body.message, 'config/bogus is not a known field of the forwardAuth middleware');
    const wrongType = await send({ name: 'Limit', type: 'rateLimit', config: { average: true } });
    assertClientError(t, wrongType, 422, 'validation_failed');
    t.deepEqual(wrongType.body.details, [{ path: '/config/average', message: 'must be string or number' }]);
    const nested = await send({
      name: 'Limit',
      type: 'rateLimit',
      config: { average: 1, sourceCriterion: { ipStrategy: { depth: 'x', nope: 1 } } },
    });
    t.deepEqual(nested.body.details.map((d: { path: string }) => d.path).sort(), [
      '/config/sourceCriterion/ipStrategy/depth',
      '/config/sourceCriterion/ipStrategy/nope',
    ]);
    assertClientError(t, await send({ ...valid, config: 'address' }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, config: [] }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, name: { first: 'x' } }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, name: '   ' }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, name: 'bell\u0007' }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, name: 'n'.repeat(101) }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, type: 'inFlightConn' }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, type: 'ForwardAuth' }), 422, 'validation_failed');
    assertClientError(t, await send({ ...valid, description: 'd'.repeat(1001) }), 422, 'validation_failed');
    assertClientError(t, await send({ name: 'x', type: 'forwardAuth' }), 422, 'validation_failed');
    assertClientError(t, await send([valid]), 422, 'validation_failed');
  }
  for (const id of ['../etc', 'a/b', 'UPPER', '-dash', 'x'.repeat(64), 'nul\u0000']) {
    const response = await post({ ...valid, name: `N ${id.length}`, id });
    assertClientError(t, response, 422, 'validation_failed');
    t.is(response.body.details[0].path, '/id');
  }
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/middlewares',
      payload: '{"name": "x",',
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'invalid_json',
  );
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/middlewares',
      payload: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    415,
    'unsupported_media_type',
  );
  assertClientError(t, await call(app, { method: 'POST', url: '/api/middlewares' }), 422, 'validation_failed');
  assertClientError(
    t,
    await call(app, {
      method: 'PUT',
      url: '/api/middlewares/keep',
      payload: 'null',
      headers: { 'content-type': 'application/json' },
    }),
    422,
    'validation_failed',
  );
  t.deepEqual(await snapshot(app.store.dataDir), before);
});

test('path ids with /, .., NUL, uppercase or unknown answer 4xx {id, message} and write nothing', async (t) => {
  const app = await buildApp(t);
  t.is((await call(app, { method: 'POST', url: '/api/middlewares', payload: { ...valid, id: 'keep' } })).status, 201);
  const before = await snapshot(app.store.dataDir);
  const ids = ['a%2Fb', 'a/b', '..', '%2E%2E', '..%2Fkeep', 'nul%00', 'x'.repeat(64), 'UPPER', 'unknown-id'];
  for (const id of ids) {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await call(app, {
        method,
        url: `/api/middlewares/${id}`,
        ...(method === 'PUT' ? { payload: valid } : {}),
      });
      assertClientError(t, response);
      t.true([404, 422].includes(response.status), `${method} ${id}: ${response.status}`);
    }
  }
  assertClientError(t, await call(app, { method: 'GET', url: '/api/middlewares/unknown-id' }), 404, 'not_found');
  const long = await call(app, { method: 'GET', url: `/api/middlewares/${'x'.repeat(64)}` });
  assertClientError(t, long, 422, 'validation_failed');
  t.is(long.body.details[0].path, '/params/id');
  t.deepEqual(await snapshot(app.store.dataDir), before);
  t.is((await call(app, { method: 'GET', url: '/api/middlewares/keep' })).status, 200);
});

test('a 300-character path id answers 4xx {id, message} and writes nothing', async (t) => {
  const app = await buildApp(t);
  const before = await snapshot(app.store.dataDir);
  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    assertClientError(
      t,
      await call(app, {
        method,
        url: `/api/middlewares/${'x'.repeat(300)}`,
        ...(method === 'PUT' ? { payload: valid } : {}),
      }),
    );
  }
  t.deepEqual(await snapshot(app.store.dataDir), before);
});

test('unknown Traefik fields are accepted with a warning when validation.allow_unknown_traefik_fields is on', async (t) => {
  const app = await buildApp(t, { config: { validation: { allow_unknown_traefik_fields: true } } });
  const created = await call(app, {
    method: 'POST',
    url: '/api/middlewares',
    payload: { ...valid, config: { address: 'http://a', futureField: true } },
  });
  t.is(created.status, 201);
  t.deepEqual(created.body.config, { address: 'http://a', futureField: true });
  t.is(created.body.warnings.length, 1);
  t.regex(created.body.warnings[0], /config\/futureField .*allow_unknown_traefik_fields/);
  // other errors still count
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/middlewares',
      payload: { name: 'L', type: 'rateLimit', config: { average: {} } },
    }),
    422,
    'validation_failed',
  );
});

test('a missing Traefik JSON Schema fails startup with a clear message', (t) => {
  t.throws(() => new TraefikSchema('/nonexistent/traefik-v3-file-provider.json'), {
    message: /Traefik JSON Schema not found at \/nonexistent\/traefik-v3-file-provider\.json/,
  });
});
