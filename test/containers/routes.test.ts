/** GET /api/container/containers and POST /api/container/container/:action against a private dockerd. */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { createContainer, dockerSkipReason, startEngine, stateOf, type Engine } from './support.ts';

const test = anyTest as TestFn<{ engine?: Engine }>;
const skip = dockerSkipReason();
if (skip) console.warn(`SKIP Docker container tests: ${skip}`);
const dockerTest = skip ? test.serial.skip : test.serial;

const STACK = ['sm-proxy', 'sm-sec', 'sm-tunnel', 'sm-gone', 'sm-act'];

test.before(async (t) => {
  if (skip) return;
  const engine = await startEngine();
  t.context.engine = engine;
  const edge = { 'com.docker.compose.project': 'edge' };
  await Promise.all([
    createContainer(engine.docker, { name: 'sm-proxy', labels: { ...edge, role: 'proxy' } }),
    createContainer(engine.docker, { name: 'sm-sec', labels: edge, healthcheck: true }),
    createContainer(engine.docker, { name: 'sm-tunnel', state: 'exited' }),
    createContainer(engine.docker, { name: 'sm-act', state: 'created' }),
    createContainer(engine.docker, { name: 'bystander', labels: { 'com.docker.compose.project': 'other' } }),
  ]);
});

test.after.always(async (t) => {
  await t.context.engine?.stop();
});

function app(
  t: ExecutionContext<{ engine?: Engine }>,
  stack: Record<string, unknown> = { containers: STACK, project: '' },
): Promise<FastifyInstance> {
  return build(t, {
    config: {
      auth: { mode: 'off' },
      docker: { host: '', socket: t.context.engine!.socket },
      stack,
      containers: { stop_timeout_s: 5, updates_ttl_s: 600 },
    },
  });
}

const list = async (server: FastifyInstance, query = '') => {
  const reply = await server.inject({ method: 'GET', url: `/api/container/containers${query}` });
  return { reply, body: reply.json() as Array<Record<string, unknown>> };
};
const act = (server: FastifyInstance, action: string, payload?: unknown) =>
  server.inject({
    method: 'POST',
    url: `/api/container/container/${action}`,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

dockerTest(
  'GET /api/container/containers lists the configured stack by name, running, exited and missing',
  async (t) => {
    const server = await app(t);
    const { reply, body } = await list(server);
    t.is(reply.statusCode, 200);
    t.is(reply.headers['x-total-count'], '5');
    t.deepEqual(
      body.map((c) => [c.name, c.state]),
      [
        ['sm-act', 'created'],
        ['sm-gone', 'missing'],
        ['sm-proxy', 'running'],
        ['sm-sec', 'running'],
        ['sm-tunnel', 'exited'],
      ],
    );
    const proxy = body.find((c) => c.name === 'sm-proxy')!;
    t.like(proxy, { image: 'stack-test/busybox:1', in_stack: true, health: 'none', ports: [] });
    t.regex(proxy.id as string, /^[0-9a-f]{64}$/);
    t.regex(proxy.image_id as string, /^sha256:[0-9a-f]{64}$/);
    t.regex(proxy.status as string, /^Up /);
    t.regex(proxy.created_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    t.regex(proxy.started_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    t.false('labels' in proxy, 'labels only with labels=true');
    t.is(body.find((c) => c.name === 'sm-act')!.started_at, null, 'never started');
    t.deepEqual(
      body.find((c) => c.name === 'sm-gone'),
      {
        id: null,
        name: 'sm-gone',
        image: null,
        image_id: null,
        state: 'missing',
        status: null,
        health: null,
        created_at: null,
        started_at: null,
        ports: null,
        in_stack: true,
      },
    );
    // the healthcheck's first run turns `starting` into `healthy`
    const healthy = await waitFor(
      async () => (await list(server)).body.find((c) => c.name === 'sm-sec' && c.health === 'healthy'),
      10_000,
      100,
    );
    t.is(healthy.state, 'running');
  },
);

dockerTest('all=true adds non-stack containers with in_stack false; labels=true adds labels', async (t) => {
  const server = await app(t);
  const { body } = await list(server, '?all=true&labels=1');
  t.deepEqual(
    body.map((c) => [c.name, c.in_stack]),
    [
      ['bystander', false],
      ['sm-act', true],
      ['sm-gone', true],
      ['sm-proxy', true],
      ['sm-sec', true],
      ['sm-tunnel', true],
    ],
  );
  t.deepEqual(body.find((c) => c.name === 'sm-proxy')!.labels, { 'com.docker.compose.project': 'edge', role: 'proxy' });
  t.deepEqual(body.find((c) => c.name === 'sm-tunnel')!.labels, {});
  t.is(body.find((c) => c.name === 'sm-gone')!.labels, null);
  const bad = await list(server, '?all=yes');
  t.is(bad.reply.statusCode, 422);
  t.is((bad.reply.json() as { id: string }).id, 'validation_failed');
});

dockerTest('with stack.project set, the stack is the containers with that compose label, none missing', async (t) => {
  const server = await app(t, { containers: STACK, project: 'edge' });
  const { body } = await list(server);
  t.deepEqual(
    body.map((c) => c.name),
    ['sm-proxy', 'sm-sec'],
  );
  const everything = await list(server, '?all=true');
  t.deepEqual(
    everything.body.filter((c) => c.in_stack).map((c) => c.name),
    ['sm-proxy', 'sm-sec'],
  );
  t.false(everything.body.some((c) => c.state === 'missing'));
  // a configured name outside the project is not in the stack in this mode
  const refused = await act(server, 'start', { container_name: 'sm-tunnel' });
  t.is(refused.statusCode, 403);
  t.is(refused.json().id, 'forbidden');
});

dockerTest(
  'POST /api/container/container/:action starts, stops and restarts a stack container, idempotently',
  async (t) => {
    const server = await app(t);
    const { docker } = t.context.engine!;

    const started = await act(server, 'start', { container_name: 'sm-act' });
    t.is(started.statusCode, 200);
    t.deepEqual(started.json(), { name: 'sm-act', action: 'start', state: 'running' });
    t.is(await stateOf(docker, 'sm-act'), 'running');
    const again = await act(server, 'start', { container_name: '/sm-act' });
    t.deepEqual(
      again.json(),
      { name: 'sm-act', action: 'start', state: 'running' },
      'start of a running container is a 200 no-op; a leading / is ignored',
    );

    const firstStart = (await docker.getContainer('sm-act').inspect()).State.StartedAt;
    const restarted = await act(server, 'restart', { container_name: 'sm-act' });
    t.deepEqual(restarted.json(), { name: 'sm-act', action: 'restart', state: 'running' });
    t.not((await docker.getContainer('sm-act').inspect()).State.StartedAt, firstStart, 'restart started it anew');

    const stopped = await act(server, 'stop', { container_name: 'sm-act' });
    t.deepEqual(stopped.json(), { name: 'sm-act', action: 'stop', state: 'exited' });
    t.is(await stateOf(docker, 'sm-act'), 'exited');
    const stoppedAgain = await act(server, 'stop', { container_name: 'sm-act' });
    t.is(stoppedAgain.statusCode, 200);
    t.is(stoppedAgain.json().state, 'exited');

    const fromStopped = await act(server, 'restart', { container_name: 'sm-act' });
    t.is(fromStopped.json().state, 'running', 'restart of a stopped container starts it');
    t.is(await stateOf(docker, 'sm-act'), 'running');
  },
);

dockerTest(
  'actions answer 404 for an unknown container, 403 outside the stack, 422 for a bad action or body',
  async (t) => {
    const server = await app(t);
    const unknown = await act(server, 'start', { container_name: 'nobody-here' });
    t.is(unknown.statusCode, 404);
    t.like(unknown.json(), { id: 'not_found', message: 'no container named nobody-here' });
    const missing = await act(server, 'start', { container_name: 'sm-gone' });
    t.is(missing.statusCode, 404, 'a configured but absent name is still no such container');

    const outside = await act(server, 'stop', { container_name: 'bystander' });
    t.is(outside.statusCode, 403);
    t.is(outside.json().id, 'forbidden');
    t.is(await stateOf(t.context.engine!.docker, 'bystander'), 'running', 'nothing happened to it');

    const badAction = await act(server, 'pause', { container_name: 'sm-act' });
    t.is(badAction.statusCode, 422);
    t.like(badAction.json(), { id: 'validation_failed' });
    t.is(badAction.json().details[0].path, '/params/action');

    for (const payload of [
      undefined,
      {},
      { container_name: '' },
      { container_name: 'a b' },
      { container_name: { name: 'sm-act' } },
    ]) {
      const bad = await act(server, 'start', payload);
      t.is(bad.statusCode, 422, JSON.stringify(payload));
      t.is(bad.json().id, 'validation_failed');
    }
  },
);
