/** GET /api/proxy/* against the Traefik API fixtures: bodies pass through unchanged, filters, paging, validation. */
import test from 'ava';
import { assertError, bodyOf, buildFor, exactFixture, hits, parsedFixture, privateFake } from './support.ts';

type Item = Record<string, unknown>;

const LISTS: Array<[string, string]> = [
  ['/api/proxy/entrypoints', 'entrypoints.json'],
  ['/api/proxy/routers', 'http-routers.json'],
  ['/api/proxy/routers?type=http', 'http-routers.json'],
  ['/api/proxy/routers?type=tcp', 'tcp-routers.json'],
  ['/api/proxy/routers?type=udp', 'udp-routers.json'],
  ['/api/proxy/services', 'http-services.json'],
  ['/api/proxy/services?type=tcp', 'tcp-services.json'],
  ['/api/proxy/services?type=udp', 'udp-services.json'],
  ['/api/proxy/middlewares', 'http-middlewares.json'],
  ['/api/proxy/middlewares?type=tcp', 'tcp-middlewares.json'],
];

test("every list route answers Traefik's list byte for byte (fields, order, MaxInt64 digits) with X-Total-Count", async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  for (const [url, file] of LISTS) {
    const response = await app.inject({ url });
    t.is(response.statusCode, 200, url);
    t.is(response.headers['content-type'], 'application/json; charset=utf-8');
    t.is(response.body, exactFixture(file), url);
    t.is(response.headers['x-total-count'], String(parsedFixture(file).length), url);
    t.is(response.headers.link, undefined);
  }
});

test('HTTP routers keep MaxInt64 priorities digit for digit and every runtime field', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const response = await app.inject({ url: '/api/proxy/routers' });
  t.true(response.body.includes('"priority":9223372036854775807'));
  t.true(response.body.includes('"priority":9223372036854775806'));
  const routers = bodyOf<Item[]>(response);
  t.deepEqual(routers, parsedFixture('http-routers.json'));
  const api = routers.find((router) => router.name === 'api@internal')!;
  t.is(api.priority, 9223372036854775806n);
  const disabled = routers.find((router) => router.status === 'disabled')!;
  t.true(Array.isArray(disabled.error));
  const services = bodyOf<Item[]>(await app.inject({ url: '/api/proxy/services' }));
  t.truthy(
    services.find(
      (service) =>
        service.serverStatus !== undefined && service.usedBy !== undefined && service.type === 'loadbalancer',
    ),
  );
});

test("GET /api/proxy/overview answers Traefik's body unchanged", async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const response = await app.inject({ url: '/api/proxy/overview' });
  t.is(response.statusCode, 200);
  t.is(response.body, exactFixture('overview.json'));
  t.is(hits(fake, '/api/overview'), 1);
});

test('GET /api/proxy/version maps Version, Codename and startDate', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const response = await app.inject({ url: '/api/proxy/version' });
  t.is(response.statusCode, 200);
  t.deepEqual(response.json(), {
    version: '3.6.24',
    codename: 'ramequin',
    start_date: '2026-11-20T07:42:18.463912047Z',
  });
});

test('search is passed to Traefik and provider filters exactly', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const searched = await app.inject({ url: '/api/proxy/routers?search=nextcloud' });
  t.is(searched.statusCode, 200);
  t.true(fake.requests.some((request) => request.url === '/api/http/routers?per_page=1000&page=1&search=nextcloud'));
  const names = bodyOf<Item[]>(searched).map((router) => router.name);
  t.deepEqual(names, ['1-Nextcloud-router-redirect@http', '1-Nextcloud-router@http']);
  t.is(searched.headers['x-total-count'], '2');

  const all = parsedFixture('http-routers.json');
  const internal = await app.inject({ url: '/api/proxy/routers?provider=internal' });
  const expected = all.filter((router) => router.provider === 'internal');
  t.true(expected.length > 0);
  t.deepEqual(bodyOf(internal), expected);
  t.is(internal.headers['x-total-count'], String(expected.length));
  // exact: neither a prefix nor another case matches
  t.deepEqual(bodyOf(await app.inject({ url: '/api/proxy/routers?provider=intern' })), []);
  t.deepEqual(bodyOf(await app.inject({ url: '/api/proxy/routers?provider=Internal' })), []);
  // both at once: Traefik searches, then the provider filter applies
  const both = bodyOf<Item[]>(
    await app.inject({ url: '/api/proxy/services?type=all&search=service&provider=http' }),
  ) as unknown as Record<string, Item[]>;
  t.true(both.http.length > 0);
  t.true(
    both.http.every((service) => service.provider === 'http' && String(service.name).toLowerCase().includes('service')),
  );
});

test('paging applies page and page_size with X-Total-Count and Link keeping the other parameters', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const all = parsedFixture('http-routers.json');
  const response = await app.inject({ url: '/api/proxy/routers?type=http&page=2&page_size=5' });
  t.is(response.statusCode, 200);
  t.deepEqual(bodyOf(response), all.slice(5, 10));
  t.is(response.headers['x-total-count'], '15');
  t.is(
    response.headers.link,
    '</api/proxy/routers?type=http&page=3&page_size=5>; rel="next", </api/proxy/routers?type=http&page=1&page_size=5>; rel="prev"',
  );
  const last = await app.inject({ url: '/api/proxy/routers?page=4&page_size=5' });
  t.deepEqual(bodyOf(last), []);
  const entrypoints = await app.inject({ url: '/api/proxy/entrypoints?page_size=2' });
  t.deepEqual(bodyOf(entrypoints), parsedFixture('entrypoints.json').slice(0, 2));
  t.regex(String(entrypoints.headers.link), /rel="next"/);
});

test('type=all answers {http, tcp, udp, errors: []}; UDP middlewares are [] and never asked for', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const routers = await app.inject({ url: '/api/proxy/routers?type=all' });
  t.is(routers.statusCode, 200);
  t.deepEqual(bodyOf(routers), {
    http: parsedFixture('http-routers.json'),
    tcp: parsedFixture('tcp-routers.json'),
    udp: parsedFixture('udp-routers.json'),
    errors: [],
  });
  t.is(routers.headers['x-total-count'], undefined);

  const middlewares = await app.inject({ url: '/api/proxy/middlewares?type=all' });
  t.is(middlewares.statusCode, 200);
  t.deepEqual(bodyOf(middlewares), {
    http: parsedFixture('http-middlewares.json'),
    tcp: parsedFixture('tcp-middlewares.json'),
    udp: [],
    errors: [],
  });
  const udp = await app.inject({ url: '/api/proxy/middlewares?type=udp' });
  t.is(udp.statusCode, 200);
  t.is(udp.body, '[]');
  t.is(udp.headers['x-total-count'], '0');
  t.is(hits(fake, '/api/udp/middlewares'), 0);
});

test('GET /api/proxy/data answers every part with errors: []', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const response = await app.inject({ url: '/api/proxy/data' });
  t.is(response.statusCode, 200);
  t.true(response.body.includes('"priority":9223372036854775807'));
  t.deepEqual(bodyOf(response), {
    overview: parsedFixture('overview.json'),
    version: { version: '3.6.24', codename: 'ramequin', start_date: '2026-11-20T07:42:18.463912047Z' },
    entrypoints: parsedFixture('entrypoints.json'),
    http: {
      routers: parsedFixture('http-routers.json'),
      services: parsedFixture('http-services.json'),
      middlewares: parsedFixture('http-middlewares.json'),
    },
    tcp: {
      routers: parsedFixture('tcp-routers.json'),
      services: parsedFixture('tcp-services.json'),
      middlewares: parsedFixture('tcp-middlewares.json'),
    },
    udp: { routers: parsedFixture('udp-routers.json'), services: parsedFixture('udp-services.json') },
    errors: [],
  });
  t.is(hits(fake, '/api/udp/middlewares'), 0);
});

test('bad query values answer 422 validation_failed naming the parameter', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const cases: Array<[string, string]> = [
    ['/api/proxy/routers?type=bogus', '/query/type'],
    ['/api/proxy/services?page=0', '/query/page'],
    ['/api/proxy/middlewares?page_size=1001', '/query/page_size'],
    ['/api/proxy/entrypoints?page=abc', '/query/page'],
    ['/api/proxy/routers?provider=', '/query/provider'],
    ['/api/proxy/routers?type=all&page=1', '/query/page'],
    ['/api/proxy/services?type=all&page_size=10', '/query/page_size'],
  ];
  for (const [url, path] of cases) {
    const body = assertError(t, await app.inject({ url }), 422, 'validation_failed');
    t.is(body.details?.[0]?.path, path, url);
  }
  // bad input never reaches Traefik
  t.is(fake.requests.filter((request) => !request.url.startsWith('/api/v1/')).length, 0);
});

test('HEAD works like GET and the routes are class C (token needed in auth mode all)', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const head = await app.inject({ method: 'HEAD', url: '/api/proxy/routers?type=tcp' });
  t.is(head.statusCode, 200);
  t.is(head.headers['x-total-count'], '2');
  t.is(head.body, '');
  assertError(t, await app.inject({ method: 'POST', url: '/api/proxy/routers' }), 405, 'method_not_allowed');

  const locked = await buildFor(t, fake, { config: { auth: { mode: 'all' } } });
  for (const path of ['overview', 'version', 'entrypoints', 'routers', 'services', 'middlewares', 'data']) {
    assertError(t, await locked.inject({ url: `/api/proxy/${path}` }), 401, 'auth_failed');
  }
  const open = await buildFor(t, fake, { config: { auth: { mode: 'ops' } } });
  t.is((await open.inject({ url: '/api/proxy/version' })).statusCode, 200);
});

test('the explorer routes are in the OpenAPI document', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  const doc = (await app.inject({ url: '/api/openapi.json' })).json() as { paths: Record<string, unknown> };
  for (const path of ['overview', 'version', 'entrypoints', 'routers', 'services', 'middlewares', 'data'])
    t.truthy(doc.paths[`/api/proxy/${path}`], path);
});
