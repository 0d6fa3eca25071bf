/**
 * Services (API.md §4.3) through a real Traefik: each test creates services through
 * `/api/services`, assigns one to its own Pangolin resource and asserts what the client and the
 * backends see (load balancing, weights, mirroring, failover, health checks).
 */
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN, type Backend, type TraefikReply } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

/** One Pangolin resource per test, all first routed to the `upstream` backend. */
const RESOURCES = ['lb', 'weighted', 'mirror', 'failover', 'health'].map((name, i) => ({
  id: i + 1,
  name,
  host: `${name}.test`,
  backends: ['upstream'],
}));
const BACKENDS = ['upstream', 'lb1', 'lb2', 'w1', 'w2', 'main', 'copy', 'primary', 'fallback', 'hc1', 'hc2'];

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startStack(hook.context(t), { backends: BACKENDS, resources: RESOURCES });
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
