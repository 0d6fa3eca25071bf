/**
 * Services (API.md §4.3) through a real Traefik: each test creates services through
 * `/api/services`, assigns one to its own Pangolin resource and asserts what the client and the
 * backends see (load balancing, weights, mirroring, failover, health checks).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { stringify } from 'yaml';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN, type Backend, type TraefikReply } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

/** One Pangolin resource per test, all first routed to the `upstream` backend. */
const RESOURCES = ['lb', 'weighted', 'mirror', 'failover', 'health', 'fields', 'fieldstcp', 'after', 'keys'].map(
  (name, i) => ({
    id: i + 1,
    name,
    host: `${name}.test`,
    backends: ['upstream'],
  }),
);
const BACKENDS = [
  'upstream',
  'lb1',
  'lb2',
  'w1',
  'w2',
  'main',
  'copy',
  'primary',
  'fallback',
  'hc1',
  'hc2',
  'f1',
  'f2',
  'later',
  'keys',
];

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startStack(hook.context(t), {
    backends: BACKENDS,
    resources: RESOURCES,
    traefik: { entryPoints: { 'tcp-fields': 'tcp' } },
  });
});

const backend = (name: string): Backend => stack.backends.find((b) => b.name === name)!;
const server = (name: string) => ({ url: backend(name).url });

/** POST /api/services, failing the test with the answer when it is not 201. */
async function createService(body: Record<string, unknown>): Promise<any> {
  const reply = await stack.sm.call('POST', '/api/services', body);
  if (reply.status !== 201) throw new Error(`POST /api/services ${body.name}: ${reply.status} ${reply.text}`);
  return reply.json;
}

/** Assigns the service to resource `<n>-<name>-router` and waits until Traefik routes `<name>.test` with it. */
async function assign(resource: string, serviceId: string, answered: (reply: TraefikReply) => boolean) {
  const index = RESOURCES.findIndex((r) => r.name === resource);
  const id = `${index + 1}-${resource}-router`;
  const reply = await stack.sm.call('POST', `/api/resources/${id}/service`, { service_id: serviceId });
  if (reply.status !== 200) throw new Error(`assign ${serviceId} to ${id}: ${reply.status} ${reply.text}`);
  return stack.traefik.waitForReply({ entryPoint: 'websecure', host: `${resource}.test` }, answered);
}

/** `count` requests to `<host>`, one after the other; returns how many each backend answered. */
async function tally(host: string, count: number, path = '/'): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const reply = await stack.traefik.request({ entryPoint: 'websecure', host, path });
    const name = reply.status === 200 ? String(reply.json?.backend) : `status ${reply.status}`;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

/** Traefik's view of one of our services (`<id>@http`), e.g. its `serverStatus`. */
const traefikService = (id: string) => stack.traefik.api(`/api/http/services/${id}@http`);

e2e('loadBalancer: both servers answer, in turn', async (t) => {
  await createService({
    name: 'LB pair',
    id: 'lb-pair',
    type: 'loadBalancer',
    config: { servers: [server('lb1'), server('lb2')] },
  });
  await assign('lb', 'lb-pair', (r) => r.json?.backend === 'lb1' || r.json?.backend === 'lb2');
  const before = backend('lb1').requests.length + backend('lb2').requests.length;
  t.deepEqual(await tally('lb.test', 10, '/round'), { lb1: 5, lb2: 5 });
  t.is(backend('lb1').requests.length + backend('lb2').requests.length - before, 10);
  t.is(backend('lb1').requests.at(-1)?.url, '/round');
  // passHostHeader defaults to true: the backend sees the client's host
  t.is(backend('lb2').requests.at(-1)?.headers.host, 'lb.test');
  const service = await traefikService('lb-pair');
  t.is(service.status, 'enabled');
  t.is(service.type, 'loadbalancer');
});

e2e('weighted: 40 requests split 3:1 between two services', async (t) => {
  await createService({ name: 'W one', id: 'w-one', type: 'loadBalancer', config: { servers: [server('w1')] } });
  await createService({ name: 'W two', id: 'w-two', type: 'loadBalancer', config: { servers: [server('w2')] } });
  await createService({
    name: 'W split',
    id: 'w-split',
    type: 'weighted',
    config: {
      services: [
        { name: 'w-one', weight: 3 },
        { name: 'w-two', weight: 1 },
      ],
    },
  });
  await assign('weighted', 'w-split', (r) => r.json?.backend === 'w1' || r.json?.backend === 'w2');
  // Traefik's weighted round robin is deterministic (earliest deadline first): every 4 picks hold
  // 3 of w-one and 1 of w-two, whatever the phase; ±1 allows for a tie broken the other way
  const counts = await tally('weighted.test', 40);
  t.deepEqual(Object.keys(counts).sort(), ['w1', 'w2']);
  t.true(Math.abs(counts.w1 - 30) <= 1, `w1 ${counts.w1} of 40`);
  t.is(counts.w1 + counts.w2, 40);
  t.is((await traefikService('w-split')).type, 'weighted');
});

e2e('mirroring: the main service answers, the mirror receives a copy with the body', async (t) => {
  await createService({
    name: 'Mirror main',
    id: 'mirror-main',
    type: 'loadBalancer',
    config: { servers: [server('main')] },
  });
  await createService({
    name: 'Mirror copy',
    id: 'mirror-copy',
    type: 'loadBalancer',
    config: { servers: [server('copy')] },
  });
  await createService({
    name: 'Mirrored',
    id: 'mirrored',
    type: 'mirroring',
    config: { service: 'mirror-main', mirrors: [{ name: 'mirror-copy', percent: 100 }], maxBodySize: 1024 },
  });
  await assign('mirror', 'mirrored', (r) => r.json?.backend === 'main');
  const body = JSON.stringify({ order: 42 });
  const reply = await stack.traefik.request({
    entryPoint: 'websecure',
    host: 'mirror.test',
    method: 'POST',
    path: '/orders?x=1',
    headers: { 'content-type': 'application/json' },
    body,
  });
  t.is(reply.status, 200);
  t.is(reply.json.backend, 'main', 'the client gets the main service’s answer');
  t.is(reply.json.body, body);
  // the copy is sent asynchronously: wait for it
  const copy = await waitFor(
    () => backend('copy').requests.find((r) => r.method === 'POST' && r.url === '/orders?x=1'),
    2_000,
  );
  t.is(copy.body, body);
  t.is(copy.headers.host, 'mirror.test');
  t.is((await traefikService('mirrored')).type, 'mirroring');
});

e2e('failover: the main service answers, the fallback once the main backend stops', async (t) => {
  await createService({
    name: 'Failover main',
    id: 'failover-main',
    type: 'loadBalancer',
    // failover follows the main service's health check
    config: { servers: [server('primary')], healthCheck: { path: '/health', interval: '500ms', timeout: '400ms' } },
  });
  await createService({
    name: 'Failover backup',
    id: 'failover-backup',
    type: 'loadBalancer',
    config: { servers: [server('fallback')] },
  });
  await createService({
    name: 'Failover',
    id: 'failover',
    type: 'failover',
    config: { service: 'failover-main', fallback: 'failover-backup' },
  });
  const first = await assign('failover', 'failover', (r) => r.json?.backend === 'primary');
  t.is(first.status, 200);
  await backend('primary').close();
  const fallback = await stack.traefik.waitForReply(
    { entryPoint: 'websecure', host: 'failover.test' },
    (r) => r.json?.backend === 'fallback',
  );
  t.is(fallback.status, 200);
  t.deepEqual(await tally('failover.test', 5), { fallback: 5 });
  t.is((await traefikService('failover')).type, 'failover');
});

e2e('health check: a server whose health path answers 503 leaves the pool and comes back', async (t) => {
  await createService({
    name: 'Checked',
    id: 'checked',
    type: 'loadBalancer',
    config: {
      servers: [server('hc1'), server('hc2')],
      healthCheck: { path: '/health', interval: '500ms', timeout: '400ms' },
    },
  });
  await assign('health', 'checked', (r) => r.json?.backend === 'hc1' || r.json?.backend === 'hc2');
  t.deepEqual(await tally('health.test', 4), { hc1: 2, hc2: 2 });

  backend('hc2').status = 503;
  const down = await waitFor(async () => {
    const service = await traefikService('checked');
    return service.serverStatus?.[backend('hc2').url] === 'DOWN' ? service : null;
  }, 2_000);
  t.is(down.serverStatus[backend('hc1').url], 'UP');
  t.true(
    backend('hc2').requests.some((r) => r.url === '/health'),
    'Traefik probed the health path',
  );
  t.deepEqual(await tally('health.test', 6), { hc1: 6 }, 'no request reaches the unhealthy server');

  backend('hc2').status = 200;
  await waitFor(async () => (await traefikService('checked')).serverStatus?.[backend('hc2').url] === 'UP', 2_000);
  const counts = await tally('health.test', 4);
  t.deepEqual(counts, { hc1: 2, hc2: 2 });
});

/** Traefik's runtime view of a service or router: enabled, and no `error` list. */
function assertRuns(t: ExecutionContext, what: string, runtime: any): void {
  t.is(runtime.status, 'enabled', `${what}: ${JSON.stringify(runtime)}`);
  t.is(runtime.error, undefined, `${what}: ${JSON.stringify(runtime.error)}`);
}

e2e('every field our API accepts for each service type runs in Traefik (HTTP and TCP)', async (t) => {
  const probe = { 'X-Probe': 'stack-manager' };
  const cookie = (name: string) => ({ cookie: { name, secure: false, httpOnly: true, sameSite: 'lax' } });
  const checked = (name: string) => ({
    method: 'GET',
    path: '/health',
    scheme: 'http',
    hostname: 'health.internal',
    port: backend(name).port,
    interval: '1s',
    timeout: '500ms',
    headers: probe,
    followRedirects: false,
  });
  for (const name of ['f1', 'f2']) {
    await createService({
      name: `All ${name}`,
      id: `all-${name}`,
      type: 'loadBalancer',
      config: {
        servers: [server(name)],
        sticky: cookie(`sm_${name}`),
        healthCheck: checked(name),
        passHostHeader: true,
        responseForwarding: { flushInterval: '100ms' },
        serversTransport: 'default@internal',
      },
    });
  }
  // healthCheck {} on weighted/mirroring/failover: their status follows their children's checks
  await createService({
    name: 'All weighted',
    id: 'all-weighted',
    type: 'weighted',
    config: {
      services: [
        { name: 'all-f1', weight: 1 },
        { name: 'all-f2', weight: 1 },
      ],
      sticky: cookie('sm_weighted'),
      healthCheck: {},
    },
  });
  await createService({
    name: 'All mirroring',
    id: 'all-mirroring',
    type: 'mirroring',
    config: { service: 'all-weighted', maxBodySize: 1024, mirrors: [{ name: 'all-f2', percent: 50 }], healthCheck: {} },
  });
  await createService({
    name: 'All failover',
    id: 'all-failover',
    type: 'failover',
    config: { service: 'all-mirroring', fallback: 'all-f2', healthCheck: {} },
  });
  const reply = await assign('fields', 'all-failover', (r) => r.json?.backend === 'f1' || r.json?.backend === 'f2');
  // the weighted service's sticky cookie (and the chosen server's) come back to the client
  const cookies = ([] as string[]).concat(reply.headers['set-cookie'] ?? []).join('; ');
  t.regex(cookies, /sm_weighted=/);
  t.regex(cookies, /HttpOnly/);
  const probed = await waitFor(() => backend('f1').requests.find((r) => r.url === '/health'), 2_000);
  t.is(probed.headers['x-probe'], 'stack-manager');
  t.is(probed.headers.host, 'health.internal');
  for (const id of ['all-f1', 'all-f2', 'all-weighted', 'all-mirroring', 'all-failover'])
    assertRuns(t, id, await traefikService(id));
  assertRuns(t, 'router', await stack.traefik.api('/api/http/routers/6-fields-router@http'));

  await createService({
    name: 'All TCP',
    id: 'all-tcp',
    type: 'loadBalancer',
    protocol: 'tcp',
    config: {
      servers: [{ address: `127.0.0.1:${backend('f1').port}` }],
      terminationDelay: 100,
      proxyProtocol: { version: 2 },
      serversTransport: 'default@internal',
    },
  });
  await createService({
    name: 'All TCP weighted',
    id: 'all-tcp-weighted',
    type: 'weighted',
    protocol: 'tcp',
    config: { services: [{ name: 'all-tcp', weight: 1 }] },
  });
  const put = await stack.sm.call('PUT', '/api/resources/7-fieldstcp-router/config/tcp', {
    enabled: true,
    entrypoints: ['tcp-fields'],
    service_id: 'all-tcp-weighted',
  });
  t.is(put.status, 200, put.text);
  const [router] = await stack.traefik.waitForRouters(['7-fieldstcp-router_tcp'], 'tcp');
  assertRuns(t, 'TCP router', router);
  for (const id of ['all-tcp', 'all-tcp-weighted'])
    assertRuns(t, id, await stack.traefik.api(`/api/tcp/services/${id}@http`));
});

e2e('a hand-edited service Traefik could not decode is held back: later changes still reach Traefik', async (t) => {
  // Traefik 3.7.15 refuses the whole document for this one key ("cannot decode configuration data:
  // healthCheck cannot be a standalone element (type *dynamic.ServerHealthCheck)") and keeps the
  // previous one: before the fix it was emitted (manual services always are) and nothing below
  // ever took effect
  const file = path.join(stack.sm.dataDir, 'services', 'empty-check.yaml');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(
    file,
    stringify({ name: 'Empty check', type: 'loadBalancer', config: { servers: [server('later')], healthCheck: {} } }),
  );
  const status = await waitFor(async () => {
    const reply = await stack.sm.call('GET', '/api/proxy-config/status');
    return reply.json.invalid_files.some((f: { path: string }) => f.path.endsWith('empty-check.yaml'))
      ? reply.json
      : null;
  }, 2_000);
  const invalid = status.invalid_files.find((f: { path: string }) => f.path.endsWith('empty-check.yaml'));
  t.regex(invalid.message, /standalone element/);

  await createService({ name: 'Later', id: 'later', type: 'loadBalancer', config: { servers: [server('later')] } });
  const reply = await assign('after', 'later', (r) => r.json?.backend === 'later');
  t.is(reply.status, 200);
  t.false(/cannot decode configuration data/.test(stack.traefik.log()), 'Traefik decoded every document');
});

e2e(
  'an unknown key in a server is refused (API) or held back (hand edit): later changes still reach Traefik',
  async (t) => {
    // before: POST → 201, the provider document carried servers[0].zz_unknown_key, Traefik logged
    // "cannot decode configuration data: field not found, node: zz_unknown_key" and kept its previous
    // document: the assignment below never took effect
    const bad = { servers: [{ ...server('keys'), zz_unknown_key: 1 }] };
    const refused = await stack.sm.call('POST', '/api/services', {
      name: 'Unknown key',
      type: 'loadBalancer',
      config: bad,
    });
    t.is(refused.status, 422);
    t.deepEqual(refused.json.details, [
      { path: '/config/servers/0/zz_unknown_key', message: 'is not a known field of a http loadBalancer service' },
    ]);
    t.is((await stack.sm.call('GET', '/api/services/unknown-key')).status, 404);

    const file = path.join(stack.sm.dataDir, 'services', 'unknown-key.yaml');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, stringify({ name: 'Unknown key', type: 'loadBalancer', config: bad }));
    const status = await waitFor(async () => {
      const reply = await stack.sm.call('GET', '/api/proxy-config/status');
      return reply.json.invalid_files.some((f: { path: string }) => f.path.endsWith('unknown-key.yaml'))
        ? reply.json
        : null;
    }, 2_000);
    const invalid = status.invalid_files.find((f: { path: string }) => f.path.endsWith('unknown-key.yaml'));
    t.regex(invalid.message, /zz_unknown_key/);

    await createService({ name: 'Keys', id: 'keys-ok', type: 'loadBalancer', config: { servers: [server('keys')] } });
    const reply = await assign('keys', 'keys-ok', (r) => r.json?.backend === 'keys');
    t.is(reply.status, 200);
    t.false(
      /field not found|cannot decode configuration data/.test(stack.traefik.log()),
      'Traefik decoded every document',
    );
  },
);
