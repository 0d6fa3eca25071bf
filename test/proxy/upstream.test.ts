/** The explorer's upstream: source selection, 503 without one, Traefik failures → 502, partial answers → 206. */
import test from 'ava';
import { assertError, bodyOf, buildFor, hits, manualClock, parsedFixture, privateFake } from './support.ts';

const ENDPOINTS = ['overview', 'version', 'entrypoints', 'routers', 'services', 'middlewares', 'data'];

test('without a traefik-type data source every explorer route answers 503 not_configured', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  t.is((await app.inject({ method: 'DELETE', url: '/api/datasource/traefik' })).statusCode, 204);
  for (const path of ENDPOINTS) {
    const body = assertError(t, await app.inject({ url: `/api/proxy/${path}` }), 503, 'not_configured');
    t.regex(body.message, /traefik/);
  }
  assertError(t, await app.inject({ url: '/api/proxy/middlewares?type=udp' }), 503, 'not_configured');
  t.is(fake.requests.filter((request) => !request.url.startsWith('/api/v1/')).length, 0);
});

test('upstream: the active traefik source, else the one named traefik, else the first traefik source by name', async (t) => {
  const named = await privateFake(t);
  const zeta = await privateFake(t);
  const alpha = await privateFake(t);
  const app = await buildFor(t, named);
  const put = (name: string, url: string) =>
    app.inject({ method: 'PUT', url: `/api/datasource/${name}`, payload: { type: 'traefik', url } });
  t.is((await put('zeta', zeta.url)).statusCode, 201);
  t.is((await put('alpha', alpha.url)).statusCode, 201);
  // a pangolin-type source named so that it sorts first is never chosen
  t.is(
    (
      await app.inject({
        method: 'PUT',
        url: '/api/datasource/aaa',
        payload: { type: 'pangolin', url: named.pangolinUrl },
      })
    ).statusCode,
    201,
  );

  t.is((await app.inject({ url: '/api/proxy/overview' })).statusCode, 200);
  t.deepEqual(
    [hits(named, '/api/overview'), hits(zeta, '/api/overview'), hits(alpha, '/api/overview')],
    [1, 0, 0],
    'the source named traefik',
  );

  t.is((await app.inject({ method: 'PUT', url: '/api/datasource/active', payload: { name: 'zeta' } })).statusCode, 200);
  t.is((await app.inject({ url: '/api/proxy/overview' })).statusCode, 200);
  t.deepEqual(
    [hits(named, '/api/overview'), hits(zeta, '/api/overview'), hits(alpha, '/api/overview')],
    [1, 1, 0],
    'the active source',
  );

  t.is(
    (await app.inject({ method: 'PUT', url: '/api/datasource/active', payload: { name: 'pangolin' } })).statusCode,
    200,
  );
  t.is((await app.inject({ method: 'DELETE', url: '/api/datasource/traefik' })).statusCode, 204);
  t.is((await app.inject({ url: '/api/proxy/overview' })).statusCode, 200);
  t.deepEqual(
    [hits(named, '/api/overview'), hits(zeta, '/api/overview'), hits(alpha, '/api/overview')],
    [1, 1, 1],
    'the first by name',
  );
});

for (const active of [true, false]) {
  test(`a traefik source is read with its own basic auth credentials (${active ? 'the active source' : 'not the active source'})`, async (t) => {
    const fake = await privateFake(t);
    const app = await buildFor(t, fake);
    const credentials = { username: 'admin', password: 'S3cret-4711' };
    t.is(
      (await app.inject({ method: 'PUT', url: '/api/datasource/traefik', payload: { basic_auth: credentials } }))
        .statusCode,
      200,
    );
    if (active)
      t.is(
        (await app.inject({ method: 'PUT', url: '/api/datasource/active', payload: { name: 'traefik' } })).statusCode,
        200,
      );
    fake.state.basicAuth = credentials;
    const response = await app.inject({ url: '/api/proxy/version' });
    t.is(response.statusCode, 200, response.body);
    const request = fake.requests.find((entry) => entry.url === '/api/version')!;
    t.is(request.headers.authorization, `Basic ${Buffer.from('admin:S3cret-4711').toString('base64')}`);
  });
}

test('Traefik failures answer 502 upstream_unavailable naming Traefik; a hung Traefik is cut at the source timeout', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  // faults that answer at once get a generous timeout (a busy machine may take seconds to relay
  // them); the hang gets the smallest timeout a data source may have: its 502 names that timeout,
  // which proves it was cut there and not left to the fake (which never answers)
  const timeout = (ms: number) =>
    app.inject({ method: 'PUT', url: '/api/datasource/traefik', payload: { timeout_ms: ms } });
  const cases: Array<{ fault: typeof fake.state.fault; url: string; message: RegExp }> = [
    {
      fault: '500',
      url: '/api/proxy/overview',
      message: /^data source traefik: Traefik answered HTTP 500 .*injected fault 500/,
    },
    { fault: '502', url: '/api/proxy/routers', message: /Traefik answered HTTP 502/ },
    { fault: 'timeout', url: '/api/proxy/version', message: /Traefik did not answer within 100 ms \(timeout\)/ },
    { fault: 'reset', url: '/api/proxy/services', message: /Traefik closed the connection/ },
    { fault: 'malformed', url: '/api/proxy/entrypoints', message: /Traefik sent invalid JSON/ },
    { fault: 'object', url: '/api/proxy/middlewares', message: /Traefik sent a JSON object .* expected a JSON array/ },
    { fault: 'array', url: '/api/proxy/overview', message: /Traefik sent a JSON array .* expected a JSON object/ },
    { fault: 'empty', url: '/api/proxy/version', message: /Traefik sent an empty body/ },
    { fault: 'object', url: '/api/proxy/version', message: /without a Version string/ },
  ];
  for (const { fault, url, message } of cases) {
    fake.state.fault = fault;
    t.is((await timeout(fault === 'timeout' ? 100 : 60_000)).statusCode, 200);
    const response = await app.inject({ url });
    const body = assertError(t, response, 502, 'upstream_unavailable');
    t.regex(body.message, message, `${fault} ${url}`);
    t.deepEqual(Object.keys(body).sort(), ['id', 'message']);
  }
});

test('type=all with one protocol failing answers 206, the failed list [] and named in errors', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  fake.state.fault = '500';
  fake.state.faultPath = '/api/tcp';
  const response = await app.inject({ url: '/api/proxy/routers?type=all' });
  t.is(response.statusCode, 206, response.body);
  const body = bodyOf<{
    http: unknown[];
    tcp: unknown[];
    udp: unknown[];
    errors: Array<{ endpoint: string; message: string }>;
  }>(response);
  t.deepEqual(body.http, parsedFixture('http-routers.json'));
  t.deepEqual(body.tcp, []);
  t.deepEqual(body.udp, parsedFixture('udp-routers.json'));
  t.is(body.errors.length, 1);
  t.deepEqual(Object.keys(body.errors[0]).sort(), ['endpoint', 'message']);
  t.is(body.errors[0].endpoint, '/api/tcp/routers');
  t.regex(body.errors[0].message, /^Traefik answered HTTP 500/);

  // middlewares: only http and tcp exist; tcp failing is still a partial answer
  const middlewares = await app.inject({ url: '/api/proxy/middlewares?type=all' });
  t.is(middlewares.statusCode, 206);
  t.deepEqual(
    bodyOf<{ errors: Array<{ endpoint: string }> }>(middlewares).errors.map((error) => error.endpoint),
    ['/api/tcp/middlewares'],
  );
});

test('type=all with every protocol failing answers 502', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  fake.state.fault = '500';
  for (const kind of ['routers', 'services', 'middlewares']) {
    const body = assertError(t, await app.inject({ url: `/api/proxy/${kind}?type=all` }), 502, 'upstream_unavailable');
    t.regex(body.message, /^data source traefik: all \d Traefik API requests failed; first: Traefik answered HTTP 500/);
  }
  // middlewares asked only http and tcp: both failed is "all"
  fake.state.faultPath = '/api/';
  const middlewares = assertError(
    t,
    await app.inject({ url: '/api/proxy/middlewares?type=all' }),
    502,
    'upstream_unavailable',
  );
  t.regex(middlewares.message, /all 2 Traefik API requests failed/);
});

test('GET /api/proxy/data with some parts failing answers 206, those parts null and listed in errors in body order', async (t) => {
  const fake = await privateFake(t);
  const clock = manualClock();
  const app = await buildFor(t, fake, { now: clock.now });
  fake.state.fault = '500';
  fake.state.faultPath = '/api/tcp';
  const response = await app.inject({ url: '/api/proxy/data' });
  t.is(response.statusCode, 206, response.body);
  const body = bodyOf<
    Record<string, unknown> & { tcp: Record<string, unknown>; errors: Array<{ endpoint: string; message: string }> }
  >(response);
  t.deepEqual(body.tcp, { routers: null, services: null, middlewares: null });
  t.deepEqual(body.overview, parsedFixture('overview.json'));
  t.deepEqual(body.http, {
    routers: parsedFixture('http-routers.json'),
    services: parsedFixture('http-services.json'),
    middlewares: parsedFixture('http-middlewares.json'),
  });
  t.deepEqual(
    body.errors.map((error) => error.endpoint),
    ['/api/tcp/routers', '/api/tcp/services', '/api/tcp/middlewares'],
  );
  for (const error of body.errors) t.regex(error.message, /^Traefik answered HTTP 500/);

  // the parts that answered are kept 1 s: move past that so every part is asked again
  clock.advance(1001);
  fake.state.faultPath = '/api/version';
  fake.state.fault = 'malformed';
  const version = await app.inject({ url: '/api/proxy/data' });
  t.is(version.statusCode, 206);
  const versionBody = bodyOf<{
    version: unknown;
    overview: unknown;
    errors: Array<{ endpoint: string; message: string }>;
  }>(version);
  t.is(versionBody.version, null);
  t.deepEqual(versionBody.overview, parsedFixture('overview.json'));
  t.deepEqual(
    versionBody.errors.map((error) => error.endpoint),
    ['/api/version'],
  );
  t.regex(versionBody.errors[0].message, /invalid JSON/);
});

test('GET /api/proxy/data with every part failing answers 502', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  fake.state.fault = 'reset';
  fake.state.faultPath = '/api/';
  const body = assertError(t, await app.inject({ url: '/api/proxy/data' }), 502, 'upstream_unavailable');
  t.regex(body.message, /^data source traefik: all 11 Traefik API requests failed; first: /);
});

test('an unreachable Traefik answers 502 naming Traefik', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  // a port that was just open and is now closed: connection refused
  const gone = await privateFake(t);
  await gone.close();
  t.is(
    (await app.inject({ method: 'PUT', url: '/api/datasource/traefik', payload: { url: gone.url } })).statusCode,
    200,
  );
  const body = assertError(t, await app.inject({ url: '/api/proxy/routers' }), 502, 'upstream_unavailable');
  t.regex(body.message, /Traefik refused the connection/);
});
