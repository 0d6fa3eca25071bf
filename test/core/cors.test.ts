/** CORS (API.md §2.11): off by default; with origins, preflights answer before auth with the fixed header lists. */
import test from 'ava';
import { build } from '../helpers/build.ts';
import { initialAdminToken, bearer } from '../auth/support.ts';

const ORIGIN = 'https://ui.example.com';
const PREFLIGHT = {
  origin: ORIGIN,
  'access-control-request-method': 'POST',
  'access-control-request-headers': 'authorization, content-type',
};

test('preflight on a protected route answers 204 with the §2.11 headers, without a token', async (t) => {
  const app = await build(t, { config: { cors: { origins: [ORIGIN, 'https://other.example.com'] } } });
  const response = await app.inject({ method: 'OPTIONS', url: '/api/auth/tokens', headers: PREFLIGHT });
  t.is(response.statusCode, 204);
  t.is(response.headers['access-control-allow-origin'], ORIGIN);
  t.is(response.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, DELETE, OPTIONS');
  t.is(
    response.headers['access-control-allow-headers'],
    'Authorization, Content-Type, Accept, If-Match, If-None-Match, X-Request-Id',
  );
  t.is(response.headers['access-control-max-age'], '600');
  t.is(response.headers['access-control-allow-credentials'], undefined);
  t.regex(String(response.headers.vary), /Origin/);
  await app.audit.flush();
  t.is(await app.store.readRaw('audit.log'), undefined, 'a preflight is not a write');
});

test('actual requests carry Allow-Origin and the exposed headers; unknown origins get none', async (t) => {
  const app = await build(t, { config: { cors: { origins: [ORIGIN] } } });
  const admin = bearer(await initialAdminToken(app));
  const allowed = await app.inject({ url: '/api/auth/tokens', headers: { ...admin, origin: ORIGIN } });
  t.is(allowed.statusCode, 200);
  t.is(allowed.headers['access-control-allow-origin'], ORIGIN);
  t.is(
    allowed.headers['access-control-expose-headers'],
    'ETag, Location, Link, X-Total-Count, API-Version, X-Request-Id, X-Config-Stale, X-Restart-Required, X-Catalogue-Stale',
  );
  const denied = await app.inject({ url: '/api/auth/tokens', headers: { origin: ORIGIN } });
  t.is(denied.statusCode, 401);
  t.is(denied.headers['access-control-allow-origin'], ORIGIN, 'a browser can read the 401');
  const foreign = await app.inject({ url: '/api/health', headers: { origin: 'https://evil.example.com' } });
  t.is(foreign.statusCode, 200);
  t.is(foreign.headers['access-control-allow-origin'], undefined);
  const prefix = await app.inject({ url: '/api/health', headers: { origin: `${ORIGIN}.evil.com` } });
  t.is(prefix.headers['access-control-allow-origin'], undefined, 'exact match only');
});

test("'*' allows every origin", async (t) => {
  const app = await build(t, { config: { cors: { origins: ['*'] } } });
  const response = await app.inject({
    method: 'OPTIONS',
    url: '/api/health',
    headers: { ...PREFLIGHT, origin: 'https://anything.example' },
  });
  t.is(response.statusCode, 204);
  t.is(response.headers['access-control-allow-origin'], '*');
});

test('with CORS off, OPTIONS answers 405 on known paths and 404 elsewhere, and no CORS headers are sent', async (t) => {
  const app = await build(t);
  const known = await app.inject({ method: 'OPTIONS', url: '/api/health', headers: PREFLIGHT });
  t.is(known.statusCode, 405);
  t.is(known.json().id, 'method_not_allowed');
  t.is(known.headers.allow, 'GET, HEAD');
  t.is(known.headers['access-control-allow-origin'], undefined);
  const unknown = await app.inject({ method: 'OPTIONS', url: '/api/nowhere', headers: PREFLIGHT });
  t.is(unknown.statusCode, 404);
  const plain = await app.inject({ url: '/api/health', headers: { origin: ORIGIN } });
  t.is(plain.headers['access-control-allow-origin'], undefined);
});
