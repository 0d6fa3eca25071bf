import test from 'ava';
import { build } from '../helpers/build.ts';
import { newRequestId, requestedVersion } from '../../core/versioning.ts';

test('version 1 is the default and can be asked for explicitly', async (t) => {
  const app = await build(t);
  for (const accept of [
    undefined,
    '*/*',
    'application/json',
    'application/json; version=1',
    'text/html, application/json;version="1"',
  ]) {
    const res = await app.inject({ method: 'GET', url: '/api/health', headers: accept ? { accept } : {} });
    t.is(res.statusCode, 200, String(accept));
    t.is(res.headers['api-version'], '1');
  }
});

test('another version answers 406 unsupported_version', async (t) => {
  const app = await build(t);
  const res = await app.inject({
    method: 'GET',
    url: '/api/health',
    headers: { accept: 'application/json; version=2' },
  });
  t.is(res.statusCode, 406);
  t.is(res.json().id, 'unsupported_version');
  t.is(res.headers['api-version'], '1');
});

test('every reply carries API-Version, Vary: Accept and X-Request-Id, errors included', async (t) => {
  const app = await build(t);
  for (const url of ['/api/health', '/api/does-not-exist']) {
    const res = await app.inject({ method: 'GET', url });
    t.is(res.headers['api-version'], '1');
    t.regex(String(res.headers.vary), /Accept/);
    t.regex(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  }
});

test('X-Request-Id echoes a well-formed caller value and replaces a bad one', async (t) => {
  const app = await build(t);
  const good = await app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'abc.DEF_1-2' } });
  t.is(good.headers['x-request-id'], 'abc.DEF_1-2');
  const bad = await app.inject({
    method: 'GET',
    url: '/api/health',
    headers: { 'x-request-id': 'no spaces <allowed>' },
  });
  t.not(bad.headers['x-request-id'], 'no spaces <allowed>');
  t.regex(String(bad.headers['x-request-id']), /^[0-9a-f-]{36}$/);
});

test('requestedVersion reads the version parameter of any media range', (t) => {
  t.is(requestedVersion(undefined), undefined);
  t.is(requestedVersion('application/json'), undefined);
  t.is(requestedVersion('application/json; version=3'), '3');
  t.is(requestedVersion('text/plain, application/json;version="1"'), '1');
});

test('new request ids are distinct random version-4 UUIDs, across refills of the entropy pool', (t) => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const seen = new Set<string>();
  // 256 ids per pool: 3,000 cross eleven refills
  for (let i = 0; i < 3000; i++) {
    const id = newRequestId();
    if (!UUID_V4.test(id)) return t.fail(`id ${i} is not a version-4 UUID: ${id}`);
    seen.add(id);
  }
  t.is(seen.size, 3000);
  // every hex digit position outside the fixed version/variant bits varies: the bytes are random
  const ids = [...seen];
  for (const position of [0, 9, 15, 20, 35])
    t.true(new Set(ids.map((id) => id[position])).size >= 12, `position ${position}`);
});
