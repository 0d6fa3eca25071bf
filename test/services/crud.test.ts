import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { assertClientError, buildApp, call, snapshot } from '../middlewares/support.ts';

const web = {
  name: 'Web app',
  type: 'loadBalancer',
  config: { servers: [{ url: 'http://web:8080' }], passHostHeader: true },
};

test('POST /api/services creates a manual http service with Location and ETag', async (t) => {
  const app = await buildApp(t);
  const created = await call(app, {
    method: 'POST',
    url: '/api/services',
    payload: { ...web, source: 'template', status: 'disabled', etag: 'x' },
  });
  t.is(created.status, 201);
  t.is(created.headers.location, '/api/services/web-app');
  t.is(created.headers.etag, `"${created.body.etag}"`);
  t.like(created.body, {
    id: 'web-app',
    name: 'Web app',
    type: 'loadBalancer',
    protocol: 'http',
    description: '',
    status: 'active',
    source: 'manual',
    provider: null,
    upstream_name: null,
    used_by: [],
    warnings: [],
  });
  const file = parse(await readFile(path.join(app.store.dataDir, 'services', 'web-app.yaml'), 'utf8'));
  t.like(file, { name: 'Web app', type: 'loadBalancer', protocol: 'http', source: 'manual' });
  t.false('status' in file);
  t.false('etag' in file);
});

test('GET /api/services and /:id: filters, paging headers, If-None-Match and 404', async (t) => {
  const app = await buildApp(t);
  await call(app, { method: 'POST', url: '/api/services', payload: { ...web, id: 'b-web' } });
  await call(app, {
    method: 'POST',
    url: '/api/services',
    payload: {
      id: 'a-db',
      name: 'Database',
      type: 'loadBalancer',
      protocol: 'tcp',
      config: { servers: [{ address: 'db:5432' }] },
    },
  });
  await call(app, {
    method: 'POST',
    url: '/api/services',
    payload: { id: 'c-split', name: 'Split', type: 'weighted', config: { services: [{ name: 'b-web', weight: 1 }] } },
  });
  const ids = async (query: string) =>
    (await call(app, { method: 'GET', url: `/api/services${query}` })).body.map((s: { id: string }) => s.id);
  t.deepEqual(await ids(''), ['a-db', 'b-web', 'c-split']);
  t.deepEqual(await ids('?protocol=tcp'), ['a-db']);
  t.deepEqual(await ids('?type=weighted'), ['c-split']);
  t.deepEqual(await ids('?q=DATA'), ['a-db']);
  t.deepEqual(await ids('?source=manual&status=active'), ['a-db', 'b-web', 'c-split']);
  t.deepEqual(await ids('?status=disabled'), []);
  const paged = await call(app, { method: 'GET', url: '/api/services?page=2&page_size=1' });
  t.deepEqual(
    paged.body.map((s: { id: string }) => s.id),
    ['b-web'],
  );
  t.is(paged.headers['x-total-count'], '3');
  t.is(
    paged.headers.link,
    '</api/services?page=3&page_size=1>; rel="next", </api/services?page=1&page_size=1>; rel="prev"',
  );
  assertClientError(
    t,
    await call(app, { method: 'GET', url: '/api/services?protocol=sctp' }),
    422,
    'validation_failed',
  );
  assertClientError(t, await call(app, { method: 'GET', url: '/api/services?status=gone' }), 422, 'validation_failed');

  const one = await call(app, { method: 'GET', url: '/api/services/b-web' });
  t.is(one.headers.etag, `"${one.body.etag}"`);
  t.deepEqual(one.body.used_by, ['/api/services/c-split']);
  t.is(
    (
      await app.inject({
        method: 'GET',
        url: '/api/services/b-web',
        headers: { 'if-none-match': one.headers.etag as string },
      })
    ).statusCode,
    304,
  );
  assertClientError(t, await call(app, { method: 'GET', url: '/api/services/nope' }), 404, 'not_found');
});

test('PUT replaces a service with If-Match, keeps its source and created_at; DELETE with If-Match', async (t) => {
  const app = await buildApp(t);
  const created = await call(app, { method: 'POST', url: '/api/services', payload: { ...web, description: 'v1' } });
  await call(app, {
    method: 'POST',
    url: '/api/services',
    payload: { name: 'Other', type: 'loadBalancer', config: { servers: [{ url: 'http://o' }] } },
  });
  const url = '/api/services/web-app';
  const replaced = await call(app, {
    method: 'PUT',
    url,
    payload: { name: 'Web', type: 'loadBalancer', config: { servers: [{ url: 'http://web:9090' }] } },
    headers: { 'if-match': `"${created.body.etag}"` },
  });
  t.is(replaced.status, 200);
  t.like(replaced.body, {
    id: 'web-app',
    name: 'Web',
    description: '',
    protocol: 'http',
    source: 'manual',
    created_at: created.body.created_at,
  });
  assertClientError(
    t,
    await call(app, { method: 'PUT', url, payload: web, headers: { 'if-match': `"${created.body.etag}"` } }),
    412,
    'precondition_failed',
  );
  assertClientError(
    t,
    await call(app, { method: 'PUT', url, payload: { ...web, name: 'OTHER' } }),
    409,
    'already_exists',
  );
  assertClientError(
    t,
    await call(app, { method: 'PUT', url, payload: { ...web, id: 'renamed' } }),
    422,
    'validation_failed',
  );
  assertClientError(
    t,
    await call(app, { method: 'PUT', url: '/api/services/missing', payload: web }),
    404,
    'not_found',
  );
  assertClientError(
    t,
    await call(app, { method: 'DELETE', url, headers: { 'if-match': '"abc"' } }),
    412,
    'precondition_failed',
  );
  t.is(
    (await app.inject({ method: 'DELETE', url, headers: { 'if-match': `"${replaced.body.etag}"` } })).statusCode,
    204,
  );
  assertClientError(t, await call(app, { method: 'DELETE', url }), 404, 'not_found');
});

test('ids: derived slugs step around taken ids; explicit taken ids and names answer 409', async (t) => {
  const app = await buildApp(t);
  t.is(
    (await call(app, { method: 'POST', url: '/api/services', payload: { ...web, name: 'Ünïcode App' } })).body.id,
    'unicode-app',
  );
  t.is(
    (await call(app, { method: 'POST', url: '/api/services', payload: { ...web, name: 'unicode app!' } })).body.id,
    'unicode-app-2',
  );
  t.is(
    (await call(app, { method: 'POST', url: '/api/services', payload: { ...web, name: '???' } })).body.id,
    'service',
  );
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/services', payload: { ...web, name: 'Fresh', id: 'service' } }),
    409,
    'already_exists',
  );
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/services', payload: { ...web, name: 'ÜNÏCODE APP' } }),
    409,
    'already_exists',
  );
});

test('bad service bodies and path ids answer 4xx {id, message} and write nothing', async (t) => {
  const app = await buildApp(t);
  t.is((await call(app, { method: 'POST', url: '/api/services', payload: { ...web, id: 'keep' } })).status, 201);
  const before = await snapshot(app.store.dataDir);
  for (const [method, url] of [
    ['POST', '/api/services'],
    ['PUT', '/api/services/keep'],
  ] as const) {
    const send = (payload: unknown) => call(app, { method, url, payload: payload as object });
    const unknown = await send({ ...web, config: { servers: [{ url: 'http://a' }], stickyy: {} } });
    assertClientError(t, unknown, 422, 'validation_failed');
    t.deepEqual(unknown.body.details, [
      { path: '/config/stickyy', message: 'is not a known field of a http loadBalancer service' },
    ]);
    const noServers = await send({ ...web, config: { servers: [] } });
    assertClientError(t, noServers, 422, 'validation_failed');
    t.is(noServers.body.details[0].path, '/config/servers');
    const missingUrl = await send({ ...web, config: { servers: [{ address: 'a:1' }] } });
    t.is(missingUrl.body.details[0].path, '/config/servers/0/url');
    assertClientError(t, await send({ ...web, type: 'highestRandomWeight' }), 422, 'validation_failed');
    assertClientError(t, await send({ ...web, protocol: 'sctp' }), 422, 'validation_failed');
    assertClientError(t, await send({ ...web, config: 5 }), 422, 'validation_failed');
    assertClientError(t, await send({ ...web, name: '' }), 422, 'validation_failed');
    assertClientError(t, await send({ type: 'loadBalancer', config: {} }), 422, 'validation_failed');
  }
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/services',
      payload: '{',
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'invalid_json',
  );
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/services', payload: 'x', headers: { 'content-type': 'text/plain' } }),
    415,
    'unsupported_media_type',
  );
  for (const id of ['a%2Fb', '..', 'nul%00', 'x'.repeat(64), 'Caps']) {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await call(app, {
        method,
        url: `/api/services/${id}`,
        ...(method === 'PUT' ? { payload: web } : {}),
      });
      assertClientError(t, response);
      t.true([404, 422].includes(response.status), `${method} ${id}`);
    }
  }
  t.deepEqual(await snapshot(app.store.dataDir), before);
});
