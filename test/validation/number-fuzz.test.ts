/**
 * Numbers in bodies and queries (API.md §2.1): finite, inside the documented range, durations that
 * fit Go's time.Duration. Every value below is sent raw (1e309 cannot be written in JS) to every
 * numeric field; out of range → 422 naming the field and nothing stored, never a 5xx.
 */
import test, { type ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { harness } from '../resources/support.ts';

/** The fuzz values as JSON text. */
const FUZZ = ['1e309', '-1e309', '123456789012345678901234567890', '18446744073709551616', '-1', '1.5'] as const;
type Fuzz = (typeof FUZZ)[number];

interface Field {
  method: 'POST' | 'PUT';
  url: string;
  /** Body JSON text with `$` where the value goes. */
  body: string;
  pointer: string;
  /** Fuzz values the field legitimately accepts (2xx); every other one must be 422. */
  accepts?: readonly Fuzz[];
  /** Run after an accepted value (removes what it created). */
  undo?: () => Promise<unknown>;
}

let cases = 0;

async function fuzz(
  t: ExecutionContext,
  app: FastifyInstance,
  field: Field,
  after?: () => Promise<unknown>,
): Promise<void> {
  const before = after ? JSON.stringify(await after()) : '';
  for (const value of FUZZ) {
    cases += 1;
    const payload = field.body.replace('$', value);
    const res = await app.inject({
      method: field.method,
      url: field.url,
      payload,
      headers: { 'content-type': 'application/json' },
    });
    const what = `${field.method} ${field.url} ${payload} → ${res.statusCode} ${res.body.slice(0, 300)}`;
    t.true(res.statusCode < 500, what);
    if (field.accepts?.includes(value)) {
      t.true(res.statusCode < 300, what);
      await field.undo?.();
      continue;
    }
    t.is(res.statusCode, 422, what);
    const body = res.json();
    t.is(body.id, 'validation_failed', what);
    t.true(
      body.details.some((d: { path: string }) => d.path === field.pointer),
      `names ${field.pointer}: ${what}`,
    );
    if (after) t.is(JSON.stringify(await after()), before, `nothing stored: ${what}`);
  }
}

test.after.always((t) => t.log(`number fuzz: ${cases} requests`));

test('mTLS middleware config: refresh_interval and reject_code', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const stored = async () => (await app.inject({ url: '/api/mtls/middleware/config' })).json();
  await fuzz(
    t,
    app,
    {
      method: 'PUT',
      url: '/api/mtls/middleware/config',
      body: '{"rules":[],"refresh_interval":$}',
      pointer: '/refresh_interval',
    },
    stored,
  );
  await fuzz(
    t,
    app,
    {
      method: 'PUT',
      url: '/api/mtls/middleware/config',
      body: '{"rules":[],"reject_code":$}',
      pointer: '/reject_code',
    },
    stored,
  );
  await fuzz(t, app, {
    method: 'PUT',
    url: '/api/mtls/middleware/config',
    body: '{"rules":[],"external_data":{"n":$}}',
    pointer: '/external_data/n',
    accepts: ['123456789012345678901234567890', '18446744073709551616', '-1', '1.5'],
  });
  // durations as text: the largest Go duration is accepted, one beyond it is not
  const put = (interval: string) =>
    app.inject({
      method: 'PUT',
      url: '/api/mtls/middleware/config',
      payload: { rules: [], refresh_interval: interval },
    });
  t.is((await put('2562047h47m16.854775807s')).statusCode, 200);
  t.is((await put('9223372036s')).statusCode, 200);
  const over = await put('2562048h');
  t.is(over.statusCode, 422, over.body);
  t.is(over.json().details[0].path, '/refresh_interval');
  t.is((await put('18446744073709551616s')).statusCode, 422);
  t.is(
    (
      await app.inject({
        method: 'PUT',
        url: '/api/mtls/middleware/config',
        payload: { rules: [], refresh_interval: 9_223_372_036 },
      })
    ).statusCode,
    200,
  );
  t.is(
    (
      await app.inject({
        method: 'PUT',
        url: '/api/mtls/middleware/config',
        payload: { rules: [], refresh_interval: 9_223_372_037 },
      })
    ).statusCode,
    422,
  );
});

test('mTLS CA and client bodies: validity_days, key_size', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/mtls/ca',
    body: '{"common_name":"ca","validity_days":$}',
    pointer: '/validity_days',
  });
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/mtls/ca',
    body: '{"common_name":"ca","key_size":$}',
    pointer: '/key_size',
  });
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/mtls/clients',
    body: '{"name":"c","p12_password":"secret-password","validity_days":$}',
    pointer: '/validity_days',
  });
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/mtls/clients',
    body: '{"name":"c","p12_password":"secret-password","key_size":$}',
    pointer: '/key_size',
  });
});

test('resources: mtlswhitelist refresh_interval / reject_code, priority, middleware assignment priority', async (t) => {
  const { app } = await harness(t);
  const resources = (await app.inject({ url: '/api/resources' })).json();
  t.true(resources.length > 0);
  const id = resources[0].id;
  const stored = async () => (await app.inject({ url: `/api/resources/${id}` })).json().etag;
  await fuzz(
    t,
    app,
    {
      method: 'PUT',
      url: `/api/resources/${id}/config/mtlswhitelist`,
      body: '{"refresh_interval":$}',
      pointer: '/refresh_interval',
    },
    stored,
  );
  await fuzz(
    t,
    app,
    {
      method: 'PUT',
      url: `/api/resources/${id}/config/mtlswhitelist`,
      body: '{"reject_code":$}',
      pointer: '/reject_code',
    },
    stored,
  );
  await fuzz(
    t,
    app,
    { method: 'PUT', url: `/api/resources/${id}/config/priority`, body: '{"priority":$}', pointer: '/priority' },
    stored,
  );
  t.is(
    (
      await app.inject({
        method: 'POST',
        url: '/api/middlewares',
        payload: { id: 'h', name: 'h', type: 'compress', config: {} },
      })
    ).statusCode,
    201,
  );
  await fuzz(
    t,
    app,
    {
      method: 'POST',
      url: `/api/resources/${id}/middlewares`,
      body: '{"middleware_id":"h","priority":$}',
      pointer: '/priority',
    },
    stored,
  );
  await fuzz(
    t,
    app,
    {
      method: 'POST',
      url: `/api/resources/${id}/middlewares/bulk`,
      body: '{"middlewares":[{"middleware_id":"h","priority":$}]}',
      pointer: '/middlewares/0/priority',
    },
    stored,
  );
});

test('middlewares and services: numbers inside Traefik objects fit Go types', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const list = async () => (await app.inject({ url: '/api/middlewares' })).json().length;
  // a fraction is refused: Traefik reads average as a Go integer and period as whole seconds, and a
  // value it cannot decode makes it refuse the whole provider document (measured with Traefik 3.7.15)
  const negative: readonly Fuzz[] = ['-1'];
  const drop = (id: string) => () => app.inject({ method: 'DELETE', url: `/api/middlewares/${id}` });
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/middlewares',
    body: '{"name":"rl","type":"rateLimit","config":{"average":$}}',
    pointer: '/config/average',
    accepts: negative,
    undo: drop('rl'),
  });
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/middlewares',
    body: '{"name":"rl","type":"rateLimit","config":{"average":1,"period":$}}',
    pointer: '/config/period',
    // a negative period: Traefik 3.7.15 disables the middleware ("negative value not valid for period")
    undo: drop('rl'),
  });
  await fuzz(
    t,
    app,
    {
      method: 'POST',
      url: '/api/middlewares',
      body: '{"name":"r","type":"retry","config":{"attempts":2,"initialInterval":$}}',
      pointer: '/config/initialInterval',
    },
    list,
  );
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/middlewares',
    body: '{"name":"b","type":"buffering","config":{"maxRequestBodyBytes":$}}',
    pointer: '/config/maxRequestBodyBytes',
    // -1: Traefik 3.7.15 disables the middleware ("max bytes should be >= 0 got -1")
    undo: drop('b'),
  });
  const over = await app.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: { name: 'p', type: 'rateLimit', config: { average: 1, period: '2562048h' } },
  });
  t.is(over.statusCode, 422, over.body);
  t.is(over.json().details[0].path, '/config/period');
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/services',
    body: '{"name":"s","type":"loadBalancer","config":{"servers":[{"url":"http://a:1"}],"healthCheck":{"path":"/","interval":$}}}',
    pointer: '/config/healthCheck/interval',
  });
});

test('tokens, data sources and queries', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  await fuzz(t, app, {
    method: 'POST',
    url: '/api/auth/tokens',
    body: '{"name":"t","role":"viewer","expires_in_days":$}',
    pointer: '/expires_in_days',
  });
  const source = async () => {
    const { poll_interval_s, timeout_ms } = (await app.inject({ url: '/api/datasource/pangolin' })).json();
    return { poll_interval_s, timeout_ms };
  };
  await fuzz(
    t,
    app,
    { method: 'PUT', url: '/api/datasource/pangolin', body: '{"poll_interval_s":$}', pointer: '/poll_interval_s' },
    source,
  );
  await fuzz(
    t,
    app,
    { method: 'PUT', url: '/api/datasource/pangolin', body: '{"timeout_ms":$}', pointer: '/timeout_ms' },
    source,
  );
  const queries = [
    ['/api/middlewares', 'page'],
    ['/api/middlewares', 'page_size'],
    ['/api/logs/proxy', 'tail'],
    ['/api/logs/proxy/advanced', 'top'],
  ] as const;
  for (const [url, query] of queries) {
    const pointer = `/query/${query}`;
    for (const value of FUZZ) {
      cases += 1;
      const res = await app.inject({ url: `${url}?${query}=${encodeURIComponent(value)}` });
      t.is(res.statusCode, 422, `${query}=${value} → ${res.statusCode} ${res.body}`);
      t.is(res.json().details[0].path, pointer);
    }
  }
});
