import test from 'ava';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { assertClientError, call, createCa, createClient, mtlsApp, mtlsFiles, PASSWORD } from './support.ts';

type Case = [label: string, request: InjectOptions, status: number, id?: string];

/** Sends each bad request and proves that it answered 4xx `{id, message}` and wrote nothing. */
async function rejectsAll(
  t: Parameters<typeof assertClientError>[0],
  app: FastifyInstance,
  dataDir: string,
  cases: Case[],
): Promise<void> {
  const before = await mtlsFiles(dataDir);
  for (const [label, request, status, id] of cases) {
    const r = await call(app, request);
    t.is(r.status, status, `${label}: ${r.raw}`);
    assertClientError(t, r, status, id);
    if (status === 422) t.true(Array.isArray(r.body.details) && r.body.details.length > 0, `${label}: ${r.raw}`);
  }
  t.deepEqual(await mtlsFiles(dataDir), before, 'no file written or changed');
}

const json = (method: 'POST' | 'PUT', url: string, payload: unknown): InjectOptions => ({
  method,
  url,
  payload: JSON.stringify(payload),
  headers: { 'content-type': 'application/json' },
});

test('POST /api/mtls/ca rejects bad bodies and queries with 4xx and writes nothing', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const ca = (body: Record<string, unknown>) =>
    json('POST', '/api/mtls/ca', { common_name: 'CA', key_size: 2048, ...body });
  await rejectsAll(t, app, dataDir, [
    [
      'malformed JSON',
      {
        method: 'POST',
        url: '/api/mtls/ca',
        payload: '{"common_name":',
        headers: { 'content-type': 'application/json' },
      },
      400,
      'invalid_json',
    ],
    [
      'not JSON',
      {
        method: 'POST',
        url: '/api/mtls/ca',
        payload: 'common_name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      415,
      'unsupported_media_type',
    ],
    ['no body', { method: 'POST', url: '/api/mtls/ca' }, 422],
    ['array body', json('POST', '/api/mtls/ca', [{ common_name: 'CA' }]), 422],
    ['common_name missing', json('POST', '/api/mtls/ca', { key_size: 2048 }), 422],
    ['common_name number', ca({ common_name: 5 }), 422],
    ['common_name empty', ca({ common_name: '' }), 422],
    ['common_name blank', ca({ common_name: '   ' }), 422],
    ['common_name too long', ca({ common_name: 'x'.repeat(65) }), 422],
    ['common_name control char', ca({ common_name: 'bad\u0007name' }), 422],
    ['organization too long', ca({ organization: 'o'.repeat(65) }), 422],
    ['country usa', ca({ country: 'usa' }), 422],
    ['country lower case', ca({ country: 'de' }), 422],
    ['validity_days 0', ca({ validity_days: 0 }), 422],
    ['validity_days 7301', ca({ validity_days: 7301 }), 422],
    ['validity_days fraction', ca({ validity_days: 1.5 }), 422],
    ['validity_days text', ca({ validity_days: '30' }), 422],
    ['key_size 1024', ca({ key_size: 1024 }), 422],
    ['key_size text', ca({ key_size: '4096' }), 422],
    ['force not a boolean', { ...ca({}), url: '/api/mtls/ca?force=maybe' }, 422],
  ]);
  t.false((await call(app, { url: '/api/mtls/config' })).body.has_ca);
});

test('client routes reject bad bodies, queries and ids with 4xx and write nothing', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  await createCa(t, app);
  await createClient(t, app, { name: 'Existing' });
  const client = (body: Record<string, unknown>) =>
    json('POST', '/api/mtls/clients', { name: 'New', p12_password: PASSWORD, key_size: 2048, ...body });
  await rejectsAll(t, app, dataDir, [
    [
      'malformed JSON',
      { method: 'POST', url: '/api/mtls/clients', payload: '{name', headers: { 'content-type': 'application/json' } },
      400,
      'invalid_json',
    ],
    ['name missing', json('POST', '/api/mtls/clients', { p12_password: PASSWORD }), 422],
    ['password missing', json('POST', '/api/mtls/clients', { name: 'x' }), 422],
    ['p12_password 7 chars', client({ p12_password: '1234567' }), 422],
    ['p12_password 129 chars', client({ p12_password: 'p'.repeat(129) }), 422],
    ['p12_password number', client({ p12_password: 12345678 }), 422],
    ['name object', client({ name: { first: 'a' } }), 422],
    ['name blank', client({ name: '  ' }), 422],
    ['name too long', client({ name: 'n'.repeat(101) }), 422],
    ['name control char', client({ name: 'tab\there' }), 422],
    ['id not a slug', client({ id: 'Not_A_Slug' }), 422],
    ['validity_days 0', client({ validity_days: 0 }), 422],
    ['validity_days 3651', client({ validity_days: 3651 }), 422],
    ['key_size 1024', client({ key_size: 1024 }), 422],
    ['legacy_p12 text', client({ legacy_p12: 'yes' }), 422],
    ['name taken (case-insensitive)', client({ name: 'EXISTING' }), 409, 'already_exists'],
    ['id taken', client({ id: 'existing' }), 409, 'already_exists'],
    ['page 0', { url: '/api/mtls/clients?page=0' }, 422],
    ['page_size 1001', { url: '/api/mtls/clients?page_size=1001' }, 422],
    ['unknown id', { url: '/api/mtls/clients/ghost' }, 404, 'not_found'],
    ['bad id pattern', { url: '/api/mtls/clients/Bad_Id' }, 422],
    ['download unknown', { url: '/api/mtls/clients/ghost/download' }, 404, 'not_found'],
    ['revoke unknown', { method: 'PUT', url: '/api/mtls/clients/ghost/revoke' }, 404, 'not_found'],
    [
      'revoke stale If-Match',
      { method: 'PUT', url: '/api/mtls/clients/existing/revoke', headers: { 'if-match': '"0000"' } },
      412,
      'precondition_failed',
    ],
    ['delete unknown', { method: 'DELETE', url: '/api/mtls/clients/ghost' }, 404, 'not_found'],
    [
      'delete stale If-Match',
      { method: 'DELETE', url: '/api/mtls/clients/existing', headers: { 'if-match': '"0000"' } },
      412,
      'precondition_failed',
    ],
    ['crl format', { url: '/api/mtls/crl?format=xml' }, 422],
    ['delete CA force not a boolean', { method: 'DELETE', url: '/api/mtls/ca?force=maybe' }, 422],
    ['delete CA with clients', { method: 'DELETE', url: '/api/mtls/ca' }, 409, 'in_use'],
    [
      'enable stale If-Match',
      { method: 'PUT', url: '/api/mtls/enable', headers: { 'if-match': '"0000"' } },
      412,
      'precondition_failed',
    ],
  ]);
  t.is((await call(app, { url: '/api/mtls/clients' })).body.length, 1);
});

test('PUT /api/mtls/middleware/config rejects bad values with 422 and writes nothing', async (t) => {
  const { app, dataDir } = await mtlsApp(t);
  const put = (payload: unknown) => json('PUT', '/api/mtls/middleware/config', payload);
  await rejectsAll(t, app, dataDir, [
    [
      'malformed JSON',
      {
        method: 'PUT',
        url: '/api/mtls/middleware/config',
        payload: '[',
        headers: { 'content-type': 'application/json' },
      },
      400,
      'invalid_json',
    ],
    ['rules not an array', put({ rules: 'nope' }), 422],
    ['rules JSON text not parsable', put({ rules: '[{"type":' }), 422],
    ['rule type unknown', put({ rules: [{ type: 'everything' }] }), 422],
    ['request_headers bad name', put({ request_headers: { 'bad name': 'x' } }), 422],
    ['request_headers value not a string', put({ request_headers: { 'X-A': 5 } }), 422],
    ['reject_message too long', put({ reject_message: 'x'.repeat(1001) }), 422],
    ['reject_code 399', put({ reject_code: 399 }), 422],
    ['reject_code 600', put({ reject_code: 600 }), 422],
    ['reject_code text', put({ reject_code: 'four hundred' }), 422],
    ['refresh_interval 5x', put({ refresh_interval: '5x' }), 422],
    ['refresh_interval negative', put({ refresh_interval: -1 }), 422],
    ['external_data array', put({ external_data: [1] }), 422],
    ['body array', put([]), 422],
  ]);
  t.is((await call(app, { url: '/api/mtls/middleware/config' })).body.reject_code, 403);
});
