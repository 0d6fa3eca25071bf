/**
 * Middlewares created and assigned through Stack Manager's API take their real effect in a real
 * Traefik (issue 25 item 3), as the client and the backend see it: headers (request, response,
 * CORS), redirects, path rewrites, chain, compress, error pages, a local plugin, and the order of
 * two assigned middlewares by priority. One stack for the file; each test has a resource (host) of
 * its own, so the tests run concurrently.
 */
import { gunzipSync } from 'node:zlib';
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN, type TraefikReply } from '../helpers/traefik.ts';
import { assertEnabled, assign, createMiddleware, routerOf, seenBy, waitForLoaded } from './middlewares-support.ts';

// concurrent: every test works on its own resource; the binary check (and its warning) is traefikTest's
const e2e = TRAEFIK_BIN ? test : traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

const NAMES = [
  'headers',
  'cors',
  'redirscheme',
  'redirregex',
  'strip',
  'add',
  'replace',
  'stripregex',
  'replaceregex',
  'chain',
  'compress',
  'errors',
  'pages',
  'order',
  'plugin',
] as const;
type Name = (typeof NAMES)[number];
const RESOURCES = NAMES.map((name, i) => ({
  id: i + 1,
  name,
  host: `${name}.test`,
  backends: [name === 'errors' ? 'failing' : name === 'pages' ? 'pages' : 'a'],
}));
const resource = (name: Name) => RESOURCES.find((r) => r.name === name)!;
const router = (name: Name) => routerOf(resource(name));

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startStack(hook.context(t), { backends: ['a', 'failing', 'pages'], resources: RESOURCES });
  stack.backends[1].status = 500;
});

/** Waits until a request to the resource's host on websecure satisfies `check`. */
const through = (name: Name, check: (reply: TraefikReply) => boolean, request: Record<string, any> = {}) =>
  stack.traefik.waitForReply({ entryPoint: 'websecure', host: resource(name).host, ...request }, check);

e2e('headers: a request header reaches the backend, a response header the client, "" removes one', async (t) => {
  await createMiddleware(stack, {
    id: 'fx-headers',
    type: 'headers',
    config: {
      customRequestHeaders: { 'X-Added-By-Traefik': 'request', 'User-Agent': '' },
      customResponseHeaders: { 'X-Seen-By-Client': 'response', 'X-Backend': '' },
    },
  });
  await assign(stack, router('headers'), 'fx-headers');
  const reply = await through('headers', (r) => r.headers['x-seen-by-client'] === 'response', {
    headers: { 'user-agent': 'e2e-probe' },
  });
  t.is(reply.status, 200);
  t.is(reply.headers['x-backend'], undefined); // the backend sets it; the middleware removed it
  t.is(reply.json.headers['x-added-by-traefik'], 'request');
  t.is(reply.json.headers['user-agent'], undefined);
});

e2e('headers CORS: Traefik answers the preflight itself and marks the actual response', async (t) => {
  await createMiddleware(stack, {
    id: 'fx-cors',
    type: 'headers',
    config: {
      accessControlAllowOriginList: ['https://app.example'],
      accessControlAllowMethods: ['GET', 'PUT'],
      accessControlAllowHeaders: ['X-Custom'],
      accessControlMaxAge: 100,
      addVaryHeader: true,
    },
  });
  await assign(stack, router('cors'), 'fx-cors');
  const origin = { origin: 'https://app.example' };
  const preflight = await through('cors', (r) => r.headers['access-control-allow-origin'] === origin.origin, {
    method: 'OPTIONS',
    headers: { ...origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'X-Custom' },
  });
  t.is(preflight.status, 200);
  t.is(preflight.headers['access-control-allow-methods'], 'GET,PUT');
  t.is(preflight.headers['access-control-allow-headers'], 'X-Custom');
  t.is(preflight.headers['access-control-max-age'], '100');
  // now in effect: a preflight no longer reaches the backend
  const before = seenBy(stack.backends[0], 'cors.test').length;
  const again = await stack.traefik.request({
    entryPoint: 'websecure',
    host: 'cors.test',
    method: 'OPTIONS',
    headers: { ...origin, 'access-control-request-method': 'PUT' },
  });
  t.is(again.status, 200);
  t.is(seenBy(stack.backends[0], 'cors.test').length, before);

  const actual = await stack.traefik.request({ entryPoint: 'websecure', host: 'cors.test', headers: origin });
  t.is(actual.status, 200);
  t.is(actual.headers['access-control-allow-origin'], 'https://app.example');
  t.regex(String(actual.headers.vary), /Origin/);
  const other = await stack.traefik.request({
    entryPoint: 'websecure',
    host: 'cors.test',
    headers: { origin: 'https://evil.example' },
  });
  t.is(other.headers['access-control-allow-origin'], undefined);
});

e2e('redirectScheme: Location with the scheme and port, permanent', async (t) => {
  await createMiddleware(stack, {
    id: 'fx-redirect-scheme',
    type: 'redirectScheme',
    config: { scheme: 'https', port: '8443', permanent: true },
  });
  await assign(stack, router('redirscheme'), 'fx-redirect-scheme');
  const reply = await through('redirscheme', (r) => r.status !== 200, { path: '/p?q=1' });
  t.is(reply.headers.location, 'https://redirscheme.test:8443/p?q=1');
  t.true([301, 308].includes(reply.status), `status ${reply.status}`);
});

e2e('redirectRegex: Location from the replacement, temporary', async (t) => {
  await createMiddleware(stack, {
    id: 'fx-redirect-regex',
    type: 'redirectRegex',
    config: { regex: '^https://([^/]+)/old/(.*)', replacement: 'https://${1}/new/${2}' },
  });
  await assign(stack, router('redirregex'), 'fx-redirect-regex');
  const reply = await through('redirregex', (r) => r.status !== 200, { path: '/old/page?x=1' });
  t.is(reply.headers.location, 'https://redirregex.test/new/page?x=1');
  t.true([302, 307].includes(reply.status), `status ${reply.status}`);
  // a path the regex does not match goes through
  const other = await stack.traefik.request({ entryPoint: 'websecure', host: 'redirregex.test', path: '/else' });
  t.is(other.status, 200);
});

/** Path middlewares: what the backend sees for a request path. */
const paths: Array<{ name: Name; type: string; config: Record<string, unknown>; sent: string; seen: string }> = [
  { name: 'strip', type: 'stripPrefix', config: { prefixes: ['/api'] }, sent: '/api/users?x=1', seen: '/users?x=1' },
  { name: 'add', type: 'addPrefix', config: { prefix: '/v1' }, sent: '/users', seen: '/v1/users' },
  { name: 'replace', type: 'replacePath', config: { path: '/fixed' }, sent: '/anything', seen: '/fixed' },
  {
    name: 'stripregex',
    type: 'stripPrefixRegex',
    config: { regex: ['/users/[0-9]+'] },
    sent: '/users/42/profile',
    seen: '/profile',
  },
  {
    name: 'replaceregex',
    type: 'replacePathRegex',
    config: { regex: '^/old/(.*)', replacement: '/new/$1' },
    sent: '/old/x',
    seen: '/new/x',
  },
];
for (const { name, type, config, sent, seen } of paths) {
  e2e(`${type}: the backend sees ${sent} as ${seen}`, async (t) => {
    await createMiddleware(stack, { id: `fx-${name}`, type, config });
    await assign(stack, router(name), `fx-${name}`);
    const reply = await through(name, (r) => r.json?.url === seen, { path: sent });
    t.is(reply.status, 200);
    if (type === 'stripPrefix') t.is(reply.json.headers['x-forwarded-prefix'], '/api');
    if (type === 'replacePath') t.is(reply.json.headers['x-replaced-path'], '/anything');
  });
}

e2e('chain: one assigned chain applies both of its members', async (t) => {
  await createMiddleware(stack, {
    id: 'fx-chain-header',
    type: 'headers',
    config: { customRequestHeaders: { 'X-Chained': 'yes' } },
  });
  await createMiddleware(stack, { id: 'fx-chain-prefix', type: 'addPrefix', config: { prefix: '/chained' } });
  await createMiddleware(stack, {
    id: 'fx-chain',
    type: 'chain',
    config: { middlewares: ['fx-chain-header', 'fx-chain-prefix'] },
  });
  await assign(stack, router('chain'), 'fx-chain');
  const reply = await through('chain', (r) => r.json?.url === '/chained/x', { path: '/x' });
  t.is(reply.json.headers['x-chained'], 'yes');
  assertEnabled(t, await waitForLoaded(stack.traefik, router('chain'), ['fx-chain', 'badger']));
});

e2e('compress: a large body is gzip-encoded for a client that accepts it, not for one that does not', async (t) => {
  await createMiddleware(stack, { id: 'fx-compress', type: 'compress', config: { minResponseBodyBytes: 1024 } });
  await assign(stack, router('compress'), 'fx-compress');
  const pad = 'x'.repeat(2000); // echoed by the backend: a body above 1 KiB
  const large = await through('compress', (r) => r.headers['content-encoding'] === 'gzip', {
    headers: { 'accept-encoding': 'gzip', 'x-pad': pad },
  });
  const body = JSON.parse(gunzipSync(large.bytes).toString('utf8'));
  t.is(body.headers['x-pad'], pad);
  t.true(large.bytes.length < 1000, `compressed to ${large.bytes.length} bytes`);
  // (minResponseBodyBytes is not asserted: the echo backend answers chunked, Go's reverse proxy then
  // flushes every write, and Traefik starts compressing on a flush whatever the size, since v3.3.5)
  const unaccepted = await stack.traefik.request({
    entryPoint: 'websecure',
    host: 'compress.test',
    headers: { 'x-pad': pad },
  });
  t.is(unaccepted.headers['content-encoding'], undefined);
});

e2e('errors: a 500 of the backend is answered with the error page service’s body, status kept', async (t) => {
  await createMiddleware(stack, {
    id: 'fx-errors',
    type: 'errors',
    config: { status: ['500-599'], service: `${resource('pages').id}-pages-service`, query: '/{status}.html' },
  });
  await assign(stack, router('errors'), 'fx-errors');
  const reply = await through('errors', (r) => r.json?.backend === 'pages', { path: '/broken' });
  t.is(reply.status, 500);
  t.is(reply.json.url, '/500.html');
  t.is(seenBy(stack.backends[1], 'errors.test').at(-1)?.url, '/broken');
});

e2e('plugin: a local plugin middleware (the badger stub) runs in the router', async (t) => {
  // this resource without Pangolin's own badger, whose stub would mark the request after ours
  delete (stack.pangolin.document as any).http.routers[router('plugin')].middlewares;
  await createMiddleware(stack, {
    id: 'fx-plugin',
    type: 'plugin',
    config: { badger: { apiBaseUrl: 'http://127.0.0.1:9/api/v1', userSessionCookieName: 'p_session' } },
  });
  await assign(stack, router('plugin'), 'fx-plugin');
  const reply = await through('plugin', (r) => r.json?.headers['x-badger-stub'] === 'fx-plugin@http');
  t.is(reply.status, 200);
  assertEnabled(t, await waitForLoaded(stack.traefik, router('plugin'), ['fx-plugin']));
});

e2e('priority orders two assigned middlewares: stripPrefix then addPrefix, or the reverse', async (t) => {
  await createMiddleware(stack, { id: 'fx-order-strip', type: 'stripPrefix', config: { prefixes: ['/api'] } });
  await createMiddleware(stack, { id: 'fx-order-add', type: 'addPrefix', config: { prefix: '/v2' } });
  await assign(stack, router('order'), 'fx-order-strip', 200);
  const first = await assign(stack, router('order'), 'fx-order-add', 100);
  t.deepEqual(first.effective_middlewares, ['fx-order-strip', 'fx-order-add', 'badger']);
  const stripFirst = await through('order', (r) => r.json?.url === '/v2/x', { path: '/api/x' });
  t.is(stripFirst.status, 200);

  // re-posting changes the priority: addPrefix now runs first, and stripPrefix no longer matches
  const second = await assign(stack, router('order'), 'fx-order-add', 300);
  t.deepEqual(second.effective_middlewares, ['fx-order-add', 'fx-order-strip', 'badger']);
  const addFirst = await through('order', (r) => r.json?.url === '/v2/api/x', { path: '/api/x' });
  t.is(addFirst.status, 200);
});
