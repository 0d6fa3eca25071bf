/** GET /api/ip/public against fake providers on 127.0.0.1 (API.md §4.12). */
// serial: the fake providers share this process's event loop; parallel app builds could hold it past the 3 s provider limit
import test from 'ava';
import Fastify, { type FastifyInstance } from 'fastify';
import { PublicIpFinder } from '../../plugins/ip/public-ip.ts';
import { build } from '../helpers/build.ts';
import { closedPort } from './support.ts';

interface Provider {
  url: string;
  calls: () => number;
  answer: { status: number; body: string };
}

/** A provider answering `answer` (mutable by the test) and counting calls; `hang` never answers. */
async function provider(
  t: { teardown: (fn: () => Promise<void>) => void },
  status: number,
  body: string,
  hang = false,
): Promise<Provider> {
  let calls = 0;
  const answer = { status, body };
  const app: FastifyInstance = Fastify({ forceCloseConnections: true });
  app.get('/', async (_request, reply) => {
    calls++;
    if (hang) return new Promise(() => {});
    return reply.code(answer.status).type('text/plain').send(answer.body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  return { url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}/`, calls: () => calls, answer };
}

function clock() {
  let ms = Date.parse('2026-01-01T00:00:00.000Z');
  return {
    now: () => new Date(ms),
    advance: (delta: number) => {
      ms += delta;
    },
  };
}

test.serial(
  'providers are tried in order: a 500 and garbage are skipped, the third IP is used and cached 5 min',
  async (t) => {
    const failing = await provider(t, 500, 'oops');
    const garbage = await provider(t, 200, '<html>hello</html>');
    const good = await provider(t, 200, '203.0.113.45\n');
    const time = clock();
    const app = await build(t, {
      now: time.now,
      config: { auth: { mode: 'off' }, ip: { public_providers: [failing.url, garbage.url, good.url] } },
    });

    const first = await app.inject({ url: '/api/ip/public' });
    t.is(first.statusCode, 200);
    t.deepEqual(first.json(), {
      ip: '203.0.113.45',
      version: 4,
      source: good.url,
      checked_at: '2026-01-01T00:00:00.000Z',
      cached: false,
      caller_ip: '127.0.0.1',
    });

    time.advance(4 * 60_000);
    const second = await app.inject({ url: '/api/ip/public' });
    t.like(second.json(), { ip: '203.0.113.45', cached: true, checked_at: '2026-01-01T00:00:00.000Z' });
    t.deepEqual([failing.calls(), garbage.calls(), good.calls()], [1, 1, 1]);

    good.answer.body = '2001:db8::45';
    const refreshed = await app.inject({ url: '/api/ip/public?refresh=true' });
    t.like(refreshed.json(), { ip: '2001:db8::45', version: 6, cached: false, checked_at: '2026-01-01T00:04:00.000Z' });
    t.is(good.calls(), 2);

    time.advance(5 * 60_000 + 1);
    good.answer.body = '203.0.113.46';
    t.like((await app.inject({ url: '/api/ip/public' })).json(), { ip: '203.0.113.46', cached: false });
    t.is(good.calls(), 3);
  },
);

test.serial('when no provider gives an IP the answer is 502 naming each failure', async (t) => {
  const failing = await provider(t, 503, 'down');
  const garbage = await provider(t, 200, '1.2.3.4/24');
  const closed = `http://127.0.0.1:${await closedPort()}/`;
  const app = await build(t, {
    config: { auth: { mode: 'off' }, ip: { public_providers: [failing.url, garbage.url, closed] } },
  });
  const res = await app.inject({ url: '/api/ip/public' });
  t.is(res.statusCode, 502);
  t.is(res.json().id, 'upstream_unavailable');
  t.regex(res.json().message, /no public-IP service gave a valid IP/);
  t.regex(res.json().message, /answered 503/);
  t.regex(res.json().message, /not an IP/);
  t.regex(res.json().message, /ECONNREFUSED/);
});

test.serial('caller_ip honours server.trust_proxy', async (t) => {
  const good = await provider(t, 200, '203.0.113.45');
  const trusting = await build(t, {
    config: { auth: { mode: 'off' }, server: { trust_proxy: true }, ip: { public_providers: [good.url] } },
  });
  const viaProxy = await trusting.inject({ url: '/api/ip/public', headers: { 'x-forwarded-for': '198.51.100.23' } });
  t.is(viaProxy.json().caller_ip, '198.51.100.23');
  const direct = await build(t, {
    config: { auth: { mode: 'off' }, server: { trust_proxy: false }, ip: { public_providers: [good.url] } },
  });
  const ignored = await direct.inject({ url: '/api/ip/public', headers: { 'x-forwarded-for': '198.51.100.23' } });
  t.is(ignored.json().caller_ip, '127.0.0.1');
});

test.serial('a provider that never answers is given up after the timeout and the next one is used', async (t) => {
  const hanging = await provider(t, 200, '', true);
  const good = await provider(t, 200, '203.0.113.45');
  // the 3 s production limit is an option, so this test stays fast
  const finder = new PublicIpFinder({
    providers: [hanging.url, good.url],
    userAgent: 'stack-manager/test',
    now: () => new Date(),
    timeoutMs: 200,
  });
  const result = await finder.lookup(false);
  t.true(result.ok);
  if (result.ok) t.is(result.value.source, good.url);
  t.is(hanging.calls(), 1);
});

test.serial('GET /api/ip/public rejects a bad refresh value with 422', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const res = await app.inject({ url: '/api/ip/public?refresh=maybe' });
  t.is(res.statusCode, 422);
});
