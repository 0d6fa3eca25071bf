/** GET /api/container/updates, the docker health probe and Docker-down answers, against a private dockerd. */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { createContainer, dockerSkipReason, startEngine, type Engine } from './support.ts';

const test = anyTest as TestFn<{ engine?: Engine }>;
const skip = dockerSkipReason();
if (skip) console.warn(`SKIP Docker update-check tests: ${skip}`);
const dockerTest = skip ? test.serial.skip : test.serial;

const STACK = ['up-proxy', 'up-sec', 'up-gone'];

test.before(async (t) => {
  if (skip) return;
  const engine = await startEngine();
  t.context.engine = engine;
  await Promise.all([
    createContainer(engine.docker, { name: 'up-proxy' }),
    createContainer(engine.docker, { name: 'up-sec', state: 'exited' }),
    createContainer(engine.docker, { name: 'up-other' }),
  ]);
});

test.after.always(async (t) => {
  await t.context.engine?.stop();
});

function app(
  t: ExecutionContext<{ engine?: Engine }>,
  docker: Record<string, unknown>,
  now?: () => Date,
): Promise<FastifyInstance> {
  return build(t, {
    now,
    config: {
      auth: { mode: 'off' },
      docker: { host: '', ...docker },
      stack: { containers: STACK, project: '' },
      containers: { stop_timeout_s: 5, updates_ttl_s: 600 },
    },
  });
}

const updates = async (server: FastifyInstance, query = '') => {
  const reply = await server.inject({ method: 'GET', url: `/api/container/updates${query}` });
  return { reply, body: reply.json() as Array<Record<string, unknown>> };
};

dockerTest(
  'GET /api/container/updates: a locally imported image has no digests, update_available null and an error',
  async (t) => {
    const server = await app(t, { socket: t.context.engine!.socket });
    const { reply, body } = await updates(server);
    t.is(reply.statusCode, 200);
    t.deepEqual(
      body.map((u) => u.service),
      ['up-proxy', 'up-sec'],
      'existing stack containers only, running or not, by name',
    );
    for (const update of body) {
      t.like(update, {
        image: 'stack-test/busybox:1',
        current_digest: null,
        latest_digest: null,
        update_available: null,
      });
      // no registry is reachable here: Docker's distribution lookup fails, and the error says so
      t.regex(
        update.error as string,
        /^the local image has no registry digest \(built or imported locally\); registry: .+/,
      );
      t.regex(update.checked_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  },
);

dockerTest('registry answers are cached per reference for updates_ttl_s; refresh=true asks again', async (t) => {
  let clock = Date.parse('2026-01-01T10:00:00.000Z');
  const server = await app(t, { socket: t.context.engine!.socket }, () => new Date(clock));
  const first = (await updates(server)).body;
  t.is(first[0].checked_at, '2026-01-01T10:00:00.000Z');
  t.is(first[1].checked_at, first[0].checked_at, 'both containers share the cached answer of their reference');

  clock += 599_000;
  t.is((await updates(server)).body[0].checked_at, '2026-01-01T10:00:00.000Z', 'within 10 min: cached');
  t.is(
    (await updates(server, '?refresh=true')).body[0].checked_at,
    '2026-01-01T10:09:59.000Z',
    'refresh bypasses the cache',
  );
  clock += 600_000;
  t.is((await updates(server)).body[0].checked_at, '2026-01-01T10:19:59.000Z', 'expired after 10 min');
  t.is((await updates(server, '?refresh=maybe')).reply.statusCode, 422);
});

dockerTest('Docker down: every container route answers 502 upstream_unavailable naming Docker, quickly', async (t) => {
  const dir = await mkdtemp('/tmp/dk-none-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const socket = path.join(dir, 'docker.sock');
  const server = await app(t, { socket });
  const replies = await Promise.all([
    server.inject({ method: 'GET', url: '/api/container/containers' }),
    server.inject({ method: 'POST', url: '/api/container/container/start', payload: { container_name: 'up-proxy' } }),
    server.inject({ method: 'GET', url: '/api/container/updates' }),
  ]);
  for (const reply of replies) {
    t.is(reply.statusCode, 502);
    t.is(reply.json().id, 'upstream_unavailable');
    t.true(reply.json().message.startsWith(`Docker at unix://${socket} is unavailable`), reply.json().message);
    // a missing socket fails at once (ENOENT), not at the 10 s call deadline: the cause says so
    t.regex(reply.json().message, /ENOENT/);
  }

  // a tcp host with nothing listening
  const tcp = await build(t, { config: { auth: { mode: 'off' }, docker: { host: 'tcp://127.0.0.1:1', socket } } });
  const refused = await tcp.inject({ method: 'GET', url: '/api/container/containers' });
  t.is(refused.statusCode, 502);
  t.regex(refused.json().message, /^Docker at tcp:\/\/127\.0\.0\.1:1 is unavailable/);
});

dockerTest(
  'the deep health check pings Docker: ok on the engine, fail when it is down, skipped without a socket',
  async (t) => {
    const up = await app(t, { socket: t.context.engine!.socket });
    const healthy = await up.inject({ method: 'GET', url: '/api/health?deep=true' });
    t.like(healthy.json().checks.docker, { status: 'ok', error: null });

    const down = await app(t, { host: 'tcp://127.0.0.1:1', socket: '/nonexistent/docker.sock' });
    const failing = await down.inject({ method: 'GET', url: '/api/health?deep=true' });
    t.is(failing.statusCode, 503);
    t.is(failing.json().checks.docker.status, 'fail');
    t.regex(failing.json().checks.docker.error, /^Docker at tcp:\/\/127\.0\.0\.1:1 is unavailable/);

    const unconfigured = await app(t, { socket: '/nonexistent/docker.sock' });
    const skipped = await unconfigured.inject({ method: 'GET', url: '/api/health?deep=true' });
    t.is(skipped.json().checks.docker.status, 'skipped');
  },
);

dockerTest('container routes are operations routes: a token is required in ops mode', async (t) => {
  const server = await build(t, {
    config: { auth: { mode: 'ops' }, docker: { host: '', socket: t.context.engine!.socket } },
  });
  for (const url of ['/api/container/containers', '/api/container/updates']) {
    const reply = await server.inject({ method: 'GET', url });
    t.is(reply.statusCode, 401, url);
    t.is(reply.json().id, 'auth_failed');
  }
});
