/** The explorer's upstream reads: whole lists across pages, the 1 s cache per upstream URL, single-flight. */
import test from 'ava';
import { waitFor } from '../helpers/wait.ts';
import { assertError, bodyOf, buildFor, hits, manualClock, parsedFixture, privateFake } from './support.ts';

test('lists are read whole with per_page=1000, following X-Next-Page', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  fake.state.pageSize = 4;
  const routers = await app.inject({ url: '/api/proxy/routers' });
  t.is(routers.statusCode, 200);
  t.deepEqual(bodyOf(routers), parsedFixture('http-routers.json'));
  t.true(routers.body.includes('"priority":9223372036854775807'));
  t.is(routers.headers['x-total-count'], '15');
  t.deepEqual(
    fake.requests.filter((request) => request.url.startsWith('/api/http/routers')).map((request) => request.url),
    [1, 2, 3, 4].map((page) => `/api/http/routers?per_page=1000&page=${page}`),
  );

  fake.state.pageSize = 2;
  const entrypoints = await app.inject({ url: '/api/proxy/entrypoints?page=2&page_size=2' });
  t.deepEqual(bodyOf(entrypoints), parsedFixture('entrypoints.json').slice(2, 4));
  t.is(entrypoints.headers['x-total-count'], '5');
  t.is(hits(fake, '/api/entrypoints'), 3);

  // search goes with every page
  const searched = await app.inject({ url: '/api/proxy/services?search=service' });
  t.is(searched.statusCode, 200);
  const pages = fake.requests
    .filter((request) => request.url.startsWith('/api/http/services'))
    .map((request) => request.url);
  t.true(pages.length > 1);
  pages.forEach((url, i) => t.is(url, `/api/http/services?per_page=1000&page=${i + 1}&search=service`));
});

test('a failing later page fails the whole list: 502, never a partial list', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  fake.state.pageSize = 4;
  fake.state.fault = '500';
  fake.state.faultPath = '/api/http/routers';
  fake.state.faultPage = 3;
  const body = assertError(t, await app.inject({ url: '/api/proxy/routers' }), 502, 'upstream_unavailable');
  t.regex(body.message, /Traefik answered HTTP 500 .*page=3/);
  t.deepEqual(
    fake.requests.filter((request) => request.url.startsWith('/api/http/routers')).map((request) => request.url),
    [1, 2, 3].map((page) => `/api/http/routers?per_page=1000&page=${page}`),
  );
});

test('concurrent identical calls share one upstream request', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  // Traefik is slow, so every call arrives while the first request still runs
  fake.state.delayMs = 150;
  const responses = await Promise.all(Array.from({ length: 10 }, () => app.inject({ url: '/api/proxy/overview' })));
  t.deepEqual(
    responses.map((response) => response.statusCode),
    Array(10).fill(200),
  );
  t.is(new Set(responses.map((response) => response.body)).size, 1);
  t.is(hits(fake, '/api/overview'), 1);

  // different routes reading the same Traefik URL share it too
  const mixed = await Promise.all([
    app.inject({ url: '/api/proxy/data' }),
    app.inject({ url: '/api/proxy/routers' }),
    app.inject({ url: '/api/proxy/routers?type=all' }),
    app.inject({ url: '/api/proxy/routers?page=1&page_size=2' }),
    app.inject({ url: '/api/proxy/version' }),
  ]);
  t.deepEqual(
    mixed.map((response) => response.statusCode),
    [200, 200, 200, 200, 200],
  );
  t.is(hits(fake, '/api/http/routers'), 1);
  t.is(hits(fake, '/api/tcp/routers'), 1);
  t.is(hits(fake, '/api/version'), 1);
  t.is(hits(fake, '/api/overview'), 1, 'the overview answer of the first batch is still fresh');
});

test('answers are kept 1 s per upstream URL (app clock), then asked again', async (t) => {
  const fake = await privateFake(t);
  const clock = manualClock();
  const app = await buildFor(t, fake, { now: clock.now });
  t.is((await app.inject({ url: '/api/proxy/routers' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/proxy/routers?provider=http&page=1&page_size=3' })).statusCode, 200);
  t.is(hits(fake, '/api/http/routers'), 1);
  clock.advance(999);
  t.is((await app.inject({ url: '/api/proxy/routers' })).statusCode, 200);
  t.is(hits(fake, '/api/http/routers'), 1, 'still fresh at 999 ms');
  clock.advance(2);
  t.is((await app.inject({ url: '/api/proxy/routers' })).statusCode, 200);
  t.is(hits(fake, '/api/http/routers'), 2, 'asked again after 1 s');

  // another URL is another entry: search values, protocols
  await app.inject({ url: '/api/proxy/routers?search=grafana' });
  await app.inject({ url: '/api/proxy/routers?search=grafana' });
  await app.inject({ url: '/api/proxy/routers?search=wiki' });
  await app.inject({ url: '/api/proxy/routers?type=tcp' });
  t.is(hits(fake, '/api/http/routers'), 4);
  t.is(hits(fake, '/api/tcp/routers'), 1);
});

test('a failure is shared by the calls waiting for it but never kept', async (t) => {
  const fake = await privateFake(t);
  const clock = manualClock();
  const app = await buildFor(t, fake, { now: clock.now });
  fake.state.fault = '500';
  fake.state.delayMs = 150;
  const failed = await Promise.all(Array.from({ length: 5 }, () => app.inject({ url: '/api/proxy/version' })));
  for (const response of failed) assertError(t, response, 502, 'upstream_unavailable');
  t.is(hits(fake, '/api/version'), 1);
  // Traefik is back: the next call (same instant) asks again instead of replaying the failure
  fake.state.fault = null;
  fake.state.delayMs = 0;
  t.is((await app.inject({ url: '/api/proxy/version' })).statusCode, 200);
  t.is(hits(fake, '/api/version'), 2);
});

test('the cache is per upstream URL: pointing the source elsewhere reads the new Traefik at once', async (t) => {
  const first = await privateFake(t);
  const second = await privateFake(t);
  const clock = manualClock();
  const app = await buildFor(t, first, { now: clock.now });
  t.is((await app.inject({ url: '/api/proxy/overview' })).statusCode, 200);
  t.is(
    (await app.inject({ method: 'PUT', url: '/api/datasource/traefik', payload: { url: second.url } })).statusCode,
    200,
  );
  t.is((await app.inject({ url: '/api/proxy/overview' })).statusCode, 200);
  t.deepEqual([hits(first, '/api/overview'), hits(second, '/api/overview')], [1, 1]);
});

test('closing the app aborts a running Traefik request', async (t) => {
  const fake = await privateFake(t);
  const app = await buildFor(t, fake);
  t.is(
    (await app.inject({ method: 'PUT', url: '/api/datasource/traefik', payload: { timeout_ms: 60000 } })).statusCode,
    200,
  );
  fake.state.fault = 'timeout';
  const pending = app.inject({ url: '/api/proxy/overview' });
  await waitFor(() => hits(fake, '/api/overview') === 1, 5000);
  const started = performance.now();
  await app.close();
  const response = await pending;
  t.true(performance.now() - started < 5000);
  const body = assertError(t, response, 502, 'upstream_unavailable');
  t.regex(body.message, /Traefik request aborted/);
});
