/**
 * Access and traffic middlewares created and assigned through Stack Manager's API, with their real
 * effect in a real Traefik (issue 25 item 3): basicAuth and digestAuth 401/200, forwardAuth to a
 * local auth server (its 401 passes through, its 200 lets through with the copied headers),
 * ipAllowList/ipWhiteList 403 then 200 for 127.0.0.1, rateLimit 429 after the burst, inFlightReq 429
 * while a request is held, circuitBreaker open on a failing backend, buffering 413, retry over a
 * load balancer whose first server refuses connections (Traefik retries only when the connection to
 * the server fails, never once the request was sent). One stack for the file, one resource per test, concurrent.
 */
import { createHash, randomBytes } from 'node:crypto';
import type http from 'node:http';
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { freePort, traefikTest, TRAEFIK_BIN, type TraefikReply, type TraefikRequest } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';
import { assign, createMiddleware, routerOf, seenBy, serveFrom, startServer } from './middlewares-support.ts';

const e2e = TRAEFIK_BIN ? test : traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

const NAMES = [
  'basic',
  'digest',
  'forward',
  'allow',
  'white',
  'rate',
  'inflight',
  'breaker',
  'buffering',
  'retry',
] as const;
type Name = (typeof NAMES)[number];
const RESOURCES = NAMES.map((name, i) => ({
  id: i + 1,
  name,
  host: `${name}.test`,
  backends: [name === 'breaker' ? 'failing' : 'a'],
}));
const resource = (name: Name) => RESOURCES.find((r) => r.name === name)!;
const router = (name: Name) => routerOf(resource(name));

/** The forwardAuth server: 200 with identity headers for `X-Token: good`, else 401; records what it got. */
const authSeen: http.IncomingHttpHeaders[] = [];
/** Responses the gate backend holds until the test releases them. */
const held: http.ServerResponse[] = [];
let authUrl = '';

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  const context = hook.context(t);
  const auth = await startServer(context, (request, response) => {
    authSeen.push(request.headers);
    if (request.headers['x-token'] === 'good')
      response.writeHead(200, { 'X-Auth-User': 'alice', 'X-Not-Copied': 'secret' }).end();
    else response.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain' }).end('denied by auth');
  });
  // a server nobody listens on: its connections are refused
  const dead = `http://127.0.0.1:${await freePort()}`;
  const gate = await startServer(context, (request, response) => {
    if (request.url === '/hold') held.push(response);
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{"backend":"gate"}');
  });
  stack = await startStack(context, {
    backends: ['a', 'failing'],
    resources: RESOURCES,
    editDocument: (document) => {
      // round robin over a refusing server and a working one: every second request fails without retry
      document.http.services[`${resource('retry').id}-retry-service`].loadBalancer.servers.unshift({ url: dead });
      serveFrom(document, resource('inflight'), gate.url);
    },
  });
  stack.backends[1].status = 500;
  context.teardown(() => held.splice(0).forEach((response) => response.end()));
  authUrl = auth.url;
});

const request = (name: Name, options: Partial<TraefikRequest> = {}) =>
  stack.traefik.request({ entryPoint: 'websecure', host: resource(name).host, ...options });
/** Waits until a request to the resource satisfies `check`. */
const through = (name: Name, check: (reply: TraefikReply) => boolean, options: Partial<TraefikRequest> = {}) =>
  stack.traefik.waitForReply({ entryPoint: 'websecure', host: resource(name).host, ...options }, check);

const sha1 = (text: string) => createHash('sha1').update(text).digest('base64');
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

e2e('basicAuth: 401 with the realm without or with wrong credentials, 200 with them', async (t) => {
  await createMiddleware(stack, {
    id: 'ac-basic',
    type: 'basicAuth',
    config: {
      users: [`alice:{SHA}${sha1('secret')}`],
      realm: 'E2E',
      headerField: 'X-WebAuth-User',
      removeHeader: true,
    },
  });
  await assign(stack, router('basic'), 'ac-basic');
  const denied = await through('basic', (r) => r.status === 401);
  t.is(denied.headers['www-authenticate'], 'Basic realm="E2E"');
  const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });
  t.is((await request('basic', { headers: basic('alice:wrong') })).status, 401);
  const reply = await request('basic', { headers: basic('alice:secret') });
  t.is(reply.status, 200);
  t.is(reply.json.headers['x-webauth-user'], 'alice');
  t.is(reply.json.headers.authorization, undefined); // removeHeader
});

e2e('digestAuth: 401 with a Digest challenge, 200 for the computed answer', async (t) => {
  await createMiddleware(stack, {
    id: 'ac-digest',
    type: 'digestAuth',
    config: { users: [`alice:E2E:${md5('alice:E2E:secret')}`], realm: 'E2E' },
  });
  await assign(stack, router('digest'), 'ac-digest');
  // a nonce belongs to one build of the middleware: challenge and answer again after a reload
  const reply = await waitFor(async () => {
    const challenge = await request('digest', { path: '/p' });
    const header = String(challenge.headers['www-authenticate'] ?? '');
    if (challenge.status !== 401 || !header.startsWith('Digest ')) return null;
    const field = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(header)?.[1] ?? '';
    t.is(field('realm'), 'E2E');
    const [nonce, opaque, cnonce, nc] = [field('nonce'), field('opaque'), randomBytes(8).toString('hex'), '00000001'];
    const response = md5([md5('alice:E2E:secret'), nonce, nc, cnonce, 'auth', md5('GET:/p')].join(':'));
    const authorization = `Digest username="alice", realm="E2E", nonce="${nonce}", uri="/p", qop=auth, nc=${nc}, cnonce="${cnonce}", response="${response}", opaque="${opaque}", algorithm=MD5`;
    const answered = await request('digest', { path: '/p', headers: { authorization } });
    return answered.status === 200 ? answered : null;
  }, 5_000);
  t.is(reply.json.backend, 'a');
  t.is(reply.json.url, '/p');
});

e2e(
  'forwardAuth: the auth server’s 401 reaches the client, its 200 lets through with the copied headers',
  async (t) => {
    await createMiddleware(stack, {
      id: 'ac-forward',
      type: 'forwardAuth',
      config: { address: `${authUrl}/check`, authResponseHeaders: ['X-Auth-User'] },
    });
    await assign(stack, router('forward'), 'ac-forward');
    const denied = await through('forward', (r) => r.status === 401, { path: '/private' });
    t.is(denied.body, 'denied by auth');
    t.is(denied.headers['www-authenticate'], 'Bearer');
    t.is(authSeen.at(-1)?.['x-forwarded-host'], 'forward.test');
    t.is(authSeen.at(-1)?.['x-forwarded-uri'], '/private');
    const backendBefore = seenBy(stack.backends[0], 'forward.test').length;
    t.is((await request('forward', { path: '/private' })).status, 401);
    t.is(seenBy(stack.backends[0], 'forward.test').length, backendBefore); // a denied request never reaches it

    const allowed = await request('forward', { path: '/private', headers: { 'x-token': 'good' } });
    t.is(allowed.status, 200);
    t.is(allowed.json.headers['x-auth-user'], 'alice');
    t.is(allowed.json.headers['x-not-copied'], undefined);
  },
);

for (const type of ['ipAllowList', 'ipWhiteList'] as const) {
  const name: Name = type === 'ipAllowList' ? 'allow' : 'white';
  e2e(`${type}: 403 outside the ranges, 200 once 127.0.0.1 is allowed`, async (t) => {
    const id = `ac-${name}`;
    await createMiddleware(stack, { id, type, config: { sourceRange: ['10.0.0.0/8'] } });
    await assign(stack, router(name), id);
    const denied = await through(name, (r) => r.status === 403);
    t.is(denied.body, 'Forbidden');
    const put = await stack.sm.call('PUT', `/api/middlewares/${id}`, {
      name: id,
      type,
      config: { sourceRange: ['10.0.0.0/8', '127.0.0.1/32'] },
    });
    t.is(put.status, 200, put.text);
    const allowed = await through(name, (r) => r.status === 200);
    t.is(allowed.json.backend, 'a');
  });
}

e2e('rateLimit: the burst passes, the next request of the same source gets 429, another source passes', async (t) => {
  await createMiddleware(stack, {
    id: 'ac-rate',
    type: 'rateLimit',
    config: { average: 1, period: '1m', burst: 2, sourceCriterion: { requestHeaderName: 'X-Client' } },
  });
  await assign(stack, router('rate'), 'ac-rate');
  // each probe is a new source, so a probe sent before the middleware took effect leaves no trace
  let client = 0;
  const statuses = await waitFor(async () => {
    const headers = { 'x-client': `c${++client}` };
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) seen.push((await request('rate', { headers })).status);
    return seen.join() === '200,200,429' ? seen : null;
  }, 5_000);
  t.deepEqual(statuses, [200, 200, 429]);
  t.is((await request('rate', { headers: { 'x-client': 'someone-else' } })).status, 200);
});

e2e('inFlightReq: while one request is held at the backend, a second one gets 429', async (t) => {
  await createMiddleware(stack, { id: 'ac-inflight', type: 'inFlightReq', config: { amount: 1 } });
  await assign(stack, router('inflight'), 'ac-inflight');
  const second = await waitFor(async () => {
    const first = request('inflight', { path: '/hold' });
    await waitFor(() => held.length > 0, 5_000);
    const reply = await request('inflight', { path: '/quick' });
    held.splice(0).forEach((response) => response.writeHead(200).end('{"backend":"gate"}'));
    t.is((await first).status, 200);
    return reply.status === 429 ? reply : null;
  }, 5_000);
  t.is(second.status, 429);
  t.is((await request('inflight', { path: '/quick' })).status, 200); // nothing held any more
});

e2e('circuitBreaker: a backend answering 500 opens the circuit, Traefik answers the fallback itself', async (t) => {
  await createMiddleware(stack, {
    id: 'ac-breaker',
    type: 'circuitBreaker',
    config: {
      expression: 'ResponseCodeRatio(500, 600, 0, 600) > 0.5',
      checkPeriod: '100ms',
      fallbackDuration: '30s',
      responseCode: 503,
    },
  });
  await assign(stack, router('breaker'), 'ac-breaker');
  // the backend's own 500s carry X-Backend; the open circuit's 503 comes from Traefik
  const open = await through('breaker', (r) => r.status === 503 && !r.headers['x-backend']);
  t.is(open.status, 503);
});

e2e('buffering: a body above maxRequestBodyBytes gets 413, a small one reaches the backend', async (t) => {
  await createMiddleware(stack, { id: 'ac-buffering', type: 'buffering', config: { maxRequestBodyBytes: 16 } });
  await assign(stack, router('buffering'), 'ac-buffering');
  const large = await through('buffering', (r) => r.status === 413, { method: 'POST', body: 'x'.repeat(100) });
  t.is(large.status, 413);
  const small = await request('buffering', { method: 'POST', body: 'tiny' });
  t.is(small.status, 200);
  t.is(small.json.body, 'tiny');
});

e2e('retry: a request the load balancer sends to a refusing server is retried on the other one', async (t) => {
  const series = async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await request('retry', { path: `/r${i}` })).status);
    return statuses;
  };
  // without retry every second request meets the refusing server (this also waits for its route)
  const without = await waitFor(async () => ((await series()).includes(502) ? true : null), 5_000);
  t.true(without);
  await createMiddleware(stack, { id: 'ac-retry', type: 'retry', config: { attempts: 3, initialInterval: '10ms' } });
  await assign(stack, router('retry'), 'ac-retry');
  const statuses = await waitFor(async () => {
    const seen = await series();
    return seen.every((status) => status === 200) ? seen : null;
  }, 5_000);
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
  t.is(seenBy(stack.backends[0], 'retry.test').at(-1)?.url, '/r5');
});
