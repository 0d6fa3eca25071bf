import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { assertClientError, buildApp, call } from './support.ts';

const rateLimit = { name: 'Rate limit', type: 'rateLimit', config: { average: 100, burst: 50 } };

test('POST /api/middlewares creates the file and answers 201 with Location, ETag and the object', async (t) => {
  const app = await buildApp(t);
  const created = await call(app, {
    method: 'POST',
    url: '/api/middlewares',
    payload: { ...rateLimit, description: 'limits', extra: 'dropped', used_by: ['x'] },
  });
  t.is(created.status, 201);
  t.is(created.headers.location, '/api/middlewares/rate-limit');
  t.is(created.headers.etag, `"${created.body.etag}"`);
  t.like(created.body, {
    id: 'rate-limit',
    name: 'Rate limit',
    type: 'rateLimit',
    description: 'limits',
    used_by: [],
    warnings: [],
  });
  t.deepEqual(created.body.config, { average: 100, burst: 50 });
  t.regex(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const file = parse(await readFile(path.join(app.store.dataDir, 'middlewares', 'rate-limit.yaml'), 'utf8'));
  t.like(file, { name: 'Rate limit', type: 'rateLimit', description: 'limits', config: { average: 100, burst: 50 } });
  t.false('extra' in file);
  t.false('used_by' in file);
});

test('ids are slugs of the name: NFKD, no diacritics, -2/-3 on collision, fallback and 63-char cut', async (t) => {
  const app = await buildApp(t);
  const post = (name: string, id?: string) =>
    call(app, { method: 'POST', url: '/api/middlewares', payload: { ...rateLimit, name, ...(id ? { id } : {}) } });
  t.is((await post('Crème Brûlée ﬁx')).body.id, 'creme-brulee-fix');
  t.is((await post('crème brûlée fix!')).body.id, 'creme-brulee-fix-2');
  t.is((await post('CREME  brulee -- FIX')).body.id, 'creme-brulee-fix-3');
  t.is((await post('日本語')).body.id, 'middleware');
  t.is((await post('中文')).body.id, 'middleware-2');
  const long = 'a'.repeat(80);
  t.is((await post(long)).body.id, 'a'.repeat(63));
  const second = (await post(`${long} b`)).body.id;
  t.is(second, `${'a'.repeat(61)}-2`);
  t.true(second.length <= 63);
  t.is((await post('Explicit', 'my-own-id')).body.id, 'my-own-id');
});

test('POST answers 409 already_exists for a taken id, a taken name (any case) and an upstream key', async (t) => {
  const app = await buildApp(t);
  await call(app, { method: 'POST', url: '/api/middlewares', payload: { ...rateLimit, id: 'limit' } });
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/middlewares', payload: { ...rateLimit, name: 'Other', id: 'limit' } }),
    409,
    'already_exists',
  );
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/middlewares', payload: { ...rateLimit, name: '  RATE LIMIT ' } }),
    409,
    'already_exists',
  );
  app.upstream.update(
    {
      mode: 'pangolin',
      source: 'pangolin',
      body: { http: { middlewares: { badger: { plugin: { badger: {} } } } } },
      hash: 'x',
      fetched_at: new Date().toISOString(),
    },
    [],
  );
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/middlewares',
      payload: { ...rateLimit, name: 'Badger', id: 'badger' },
    }),
    409,
    'already_exists',
  );
  // a derived id steps around the upstream key instead
  t.is(
    (await call(app, { method: 'POST', url: '/api/middlewares', payload: { ...rateLimit, name: 'Badger' } })).body.id,
    'badger-2',
  );
});

test('GET /api/middlewares filters by type and q, sorts by id and pages with X-Total-Count and Link', async (t) => {
  const app = await buildApp(t);
  for (const [id, name, type, config] of [
    ['c-limit', 'Gamma limit', 'rateLimit', { average: 1 }],
    ['a-limit', 'Alpha limit', 'rateLimit', { average: 2 }],
    ['b-https', 'Beta HTTPS', 'redirectScheme', { scheme: 'https' }],
  ] as const) {
    t.is(
      (await call(app, { method: 'POST', url: '/api/middlewares', payload: { id, name, type, config } })).status,
      201,
    );
  }
  const all = await call(app, { method: 'GET', url: '/api/middlewares' });
  t.deepEqual(
    all.body.map((m: { id: string }) => m.id),
    ['a-limit', 'b-https', 'c-limit'],
  );
  t.is(all.headers['x-total-count'], '3');
  t.is(all.headers.link, undefined);
  const limits = await call(app, { method: 'GET', url: '/api/middlewares?type=rateLimit' });
  t.deepEqual(
    limits.body.map((m: { id: string }) => m.id),
    ['a-limit', 'c-limit'],
  );
  t.deepEqual(
    (await call(app, { method: 'GET', url: '/api/middlewares?q=BETA' })).body.map((m: { id: string }) => m.id),
    ['b-https'],
  );
  t.deepEqual(
    (await call(app, { method: 'GET', url: '/api/middlewares?q=c-lim' })).body.map((m: { id: string }) => m.id),
    ['c-limit'],
  );

  const page1 = await call(app, { method: 'GET', url: '/api/middlewares?type=rateLimit&page_size=1' });
  t.deepEqual(
    page1.body.map((m: { id: string }) => m.id),
    ['a-limit'],
  );
  t.is(page1.headers['x-total-count'], '2');
  t.is(page1.headers.link, '</api/middlewares?type=rateLimit&page_size=1&page=2>; rel="next"');
  const page2 = await call(app, { method: 'GET', url: '/api/middlewares?type=rateLimit&page=2&page_size=1' });
  t.deepEqual(
    page2.body.map((m: { id: string }) => m.id),
    ['c-limit'],
  );
  t.is(page2.headers.link, '</api/middlewares?type=rateLimit&page=1&page_size=1>; rel="prev"');
  const past = await call(app, { method: 'GET', url: '/api/middlewares?page=9' });
  t.deepEqual(past.body, []);
  t.is(past.headers['x-total-count'], '3');
  assertClientError(t, await call(app, { method: 'GET', url: '/api/middlewares?page=0' }), 422, 'validation_failed');
  assertClientError(
    t,
    await call(app, { method: 'GET', url: '/api/middlewares?page_size=1001' }),
    422,
    'validation_failed',
  );
  assertClientError(
    t,
    await call(app, { method: 'GET', url: '/api/middlewares?type=tcpThing' }),
    422,
    'validation_failed',
  );
});

test('GET /api/middlewares/:id answers the object with ETag, 304 on If-None-Match, 404 for unknown ids', async (t) => {
  const app = await buildApp(t);
  const created = await call(app, { method: 'POST', url: '/api/middlewares', payload: rateLimit });
  const one = await call(app, { method: 'GET', url: '/api/middlewares/rate-limit' });
  t.is(one.status, 200);
  t.deepEqual(one.body, created.body);
  t.is(one.headers.etag, `"${one.body.etag}"`);
  for (const tag of [`"${one.body.etag}"`, `W/"${one.body.etag}"`, '*', `"other", "${one.body.etag}"`]) {
    const cached = await app.inject({
      method: 'GET',
      url: '/api/middlewares/rate-limit',
      headers: { 'if-none-match': tag },
    });
    t.is(cached.statusCode, 304, tag);
    t.is(cached.body, '');
  }
  t.is(
    (await call(app, { method: 'GET', url: '/api/middlewares/rate-limit', headers: { 'if-none-match': '"stale"' } }))
      .status,
    200,
  );
  t.is((await app.inject({ method: 'HEAD', url: '/api/middlewares/rate-limit' })).statusCode, 200);
  assertClientError(t, await call(app, { method: 'GET', url: '/api/middlewares/nope' }), 404, 'not_found');
});

test('PUT replaces the middleware, honours If-Match and keeps names unique', async (t) => {
  const app = await buildApp(t);
  const created = await call(app, {
    method: 'POST',
    url: '/api/middlewares',
    payload: { ...rateLimit, description: 'old' },
  });
  await call(app, {
    method: 'POST',
    url: '/api/middlewares',
    payload: { name: 'HTTPS', type: 'redirectScheme', config: { scheme: 'https' } },
  });
  const url = '/api/middlewares/rate-limit';
  const replaced = await call(app, {
    method: 'PUT',
    url,
    payload: { id: 'rate-limit', name: 'Slow down', type: 'rateLimit', config: { average: 5 } },
    headers: { 'if-match': `"${created.body.etag}"` },
  });
  t.is(replaced.status, 200);
  t.like(replaced.body, { id: 'rate-limit', name: 'Slow down', description: '', created_at: created.body.created_at });
  t.deepEqual(replaced.body.config, { average: 5 });
  t.not(replaced.body.etag, created.body.etag);
  t.is(replaced.headers.etag, `"${replaced.body.etag}"`);

  const stale = await call(app, {
    method: 'PUT',
    url,
    payload: { name: 'X', type: 'rateLimit', config: { average: 6 } },
    headers: { 'if-match': `"${created.body.etag}"` },
  });
  assertClientError(t, stale, 412, 'precondition_failed');
  t.is((await call(app, { method: 'GET', url })).body.name, 'Slow down');
  assertClientError(
    t,
    await call(app, { method: 'PUT', url, payload: { name: 'https', type: 'rateLimit', config: { average: 6 } } }),
    409,
    'already_exists',
  );
  assertClientError(
    t,
    await call(app, {
      method: 'PUT',
      url,
      payload: { id: 'other', name: 'X', type: 'rateLimit', config: { average: 6 } },
    }),
    422,
    'validation_failed',
  );
  assertClientError(
    t,
    await call(app, {
      method: 'PUT',
      url: '/api/middlewares/missing',
      payload: { name: 'X', type: 'rateLimit', config: { average: 6 } },
    }),
    404,
    'not_found',
  );
  // renaming to its own name in another case is fine
  t.is(
    (
      await call(app, {
        method: 'PUT',
        url,
        payload: { name: 'SLOW DOWN', type: 'rateLimit', config: { average: 6 } },
        headers: { 'if-match': '*' },
      })
    ).status,
    200,
  );
});

test('DELETE removes the file, honours If-Match and answers 404 for unknown ids', async (t) => {
  const app = await buildApp(t);
  const created = await call(app, { method: 'POST', url: '/api/middlewares', payload: rateLimit });
  const url = '/api/middlewares/rate-limit';
  assertClientError(
    t,
    await call(app, { method: 'DELETE', url, headers: { 'if-match': '"0000"' } }),
    412,
    'precondition_failed',
  );
  const deleted = await app.inject({ method: 'DELETE', url, headers: { 'if-match': `W/"${created.body.etag}"` } });
  t.is(deleted.statusCode, 204);
  t.is(deleted.body, '');
  await t.throwsAsync(readFile(path.join(app.store.dataDir, 'middlewares', 'rate-limit.yaml')));
  assertClientError(t, await call(app, { method: 'DELETE', url }), 404, 'not_found');
  assertClientError(t, await call(app, { method: 'GET', url }), 404, 'not_found');
});
