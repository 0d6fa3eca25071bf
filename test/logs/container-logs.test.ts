/** GET /api/logs/:service and the container fallback of the access-log stats, against a private dockerd. */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { dockerSkipReason, startEngine, TEST_IMAGE, type Engine } from '../containers/support.ts';

const test = anyTest as TestFn<{ engine?: Engine }>;
const skip = dockerSkipReason();
if (skip) console.warn(`SKIP Docker log tests: ${skip}`);
const dockerTest = skip ? test.serial.skip : test.serial;

type Line = { ts: string; stream: string; line: string; truncated: boolean };

const NUMBERED = 'for i in 1 2 3 4 5; do echo "out $i"; echo "err $i" >&2; done';
const access = (iso: string) =>
  `{"ClientHost":"203.0.113.9","DownstreamStatus":502,"DownstreamContentSize":7,"Duration":3000000,"RequestMethod":"GET","RequestPath":"/a?b","StartUTC":"${iso}"}`;

async function run(engine: Engine, name: string, script: string, tty = false): Promise<void> {
  const container = await engine.docker.createContainer({
    name,
    Image: TEST_IMAGE,
    Cmd: ['sh', '-c', script],
    Tty: tty,
    HostConfig: { NetworkMode: 'none', Init: true },
  });
  await container.start();
}

test.before(async (t) => {
  if (skip) return;
  const engine = await startEngine();
  t.context.engine = engine;
  const long = 'x'.repeat(20_000);
  await Promise.all([
    run(engine, 'lg-numbers', NUMBERED),
    run(engine, 'lg-tty', `${NUMBERED}; echo done`, true),
    run(engine, 'lg-timed', 'echo early; sleep 1; echo late'),
    run(engine, 'lg-long', `echo ${long}; echo short`),
    run(engine, 'lg-access', `echo '${access(new Date().toISOString())}'; echo 'not an access line'`),
  ]);
});

test.after.always(async (t) => {
  await t.context.engine?.stop();
});

const SERVICES = { secengine: 'lg-numbers', proxy: 'lg-access', tunnelapp: 'lg-tty', tunnelgw: 'lg-timed' };

function app(
  t: ExecutionContext<{ engine?: Engine }>,
  services: Record<string, string> = SERVICES,
): Promise<FastifyInstance> {
  return build(t, {
    config: {
      auth: { mode: 'off' },
      docker: { host: '', socket: t.context.engine!.socket },
      logs: { proxy_access_log: '', services },
    },
  });
}

async function lines(server: FastifyInstance, url: string): Promise<{ status: number; body: Line[] }> {
  const reply = await server.inject({ method: 'GET', url });
  return { status: reply.statusCode, body: reply.json() };
}

/** Polls until the service has printed `count` lines (containers write asynchronously). */
const printed = (server: FastifyInstance, service: string, count: number) =>
  waitFor(
    async () => ((await lines(server, `/api/logs/${service}?tail=10000`)).body.length >= count ? true : null),
    20_000,
    50,
  );

dockerTest('GET /api/logs/:service returns stdout and stderr lines with timestamps, oldest first', async (t) => {
  const server = await app(t);
  await printed(server, 'secengine', 10);
  const { status, body } = await lines(server, '/api/logs/secengine');
  t.is(status, 200);
  t.is(body.length, 10);
  t.deepEqual(
    body.filter((l) => l.stream === 'stdout').map((l) => l.line),
    ['out 1', 'out 2', 'out 3', 'out 4', 'out 5'],
  );
  t.deepEqual(
    body.filter((l) => l.stream === 'stderr').map((l) => l.line),
    ['err 1', 'err 2', 'err 3', 'err 4', 'err 5'],
  );
  for (const line of body) {
    t.regex(line.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    t.false(line.truncated);
  }
  const times = body.map((l) => `${l.ts.slice(0, 19)}.${(l.ts.slice(20, -1) || '').padEnd(9, '0')}`);
  t.deepEqual(times, [...times].sort(), 'merged by timestamp');
});

dockerTest('GET /api/logs/:service honours tail and the stream filter', async (t) => {
  const server = await app(t);
  await printed(server, 'secengine', 10);
  t.is((await lines(server, '/api/logs/secengine?tail=4')).body.length, 4);
  const { body: out } = await lines(server, '/api/logs/secengine?tail=2&stream=stdout');
  t.deepEqual(
    out.map((l) => [l.stream, l.line]),
    [
      ['stdout', 'out 4'],
      ['stdout', 'out 5'],
    ],
  );
  const { body: err } = await lines(server, '/api/logs/secengine?stream=stderr');
  t.deepEqual(
    err.map((l) => l.line),
    ['err 1', 'err 2', 'err 3', 'err 4', 'err 5'],
  );
});

dockerTest('GET /api/logs/:service reads a TTY container raw: every line is stdout', async (t) => {
  const server = await app(t);
  await printed(server, 'tunnelapp', 11);
  const { status, body } = await lines(server, '/api/logs/tunnelapp');
  t.is(status, 200);
  t.is(body.length, 11);
  t.true(body.every((l) => l.stream === 'stdout'));
  t.deepEqual(body.map((l) => l.line).sort(), [
    'done',
    'err 1',
    'err 2',
    'err 3',
    'err 4',
    'err 5',
    'out 1',
    'out 2',
    'out 3',
    'out 4',
    'out 5',
  ]);
  t.is(body[10].line, 'done');
});

dockerTest('GET /api/logs/:service limits lines to since and until', async (t) => {
  const server = await app(t);
  await printed(server, 'tunnelgw', 2);
  const { body: both } = await lines(server, '/api/logs/tunnelgw');
  t.deepEqual(
    both.map((l) => l.line),
    ['early', 'late'],
  );
  const lateMs = Date.parse(both[1].ts);
  const earlyMs = Date.parse(both[0].ts);
  const { body: since } = await lines(server, `/api/logs/tunnelgw?since=${new Date(lateMs).toISOString()}`);
  t.deepEqual(
    since.map((l) => l.line),
    ['late'],
  );
  const { body: until } = await lines(server, `/api/logs/tunnelgw?until=${new Date(earlyMs + 500).toISOString()}`);
  t.deepEqual(
    until.map((l) => l.line),
    ['early'],
  );
  const { body: recent } = await lines(server, '/api/logs/tunnelgw?since=1h');
  t.is(recent.length, 2);
});

dockerTest('GET /api/logs/:service cuts lines longer than 16 KiB and flags them', async (t) => {
  const server = await app(t, { ...SERVICES, secengine: 'lg-long' });
  await printed(server, 'secengine', 2);
  const { body } = await lines(server, '/api/logs/secengine');
  t.deepEqual(
    body.map((l) => [l.line.length, l.truncated]),
    [
      [16 * 1024, true],
      [5, false],
    ],
  );
  t.is(body[0].line, 'x'.repeat(16 * 1024));
  t.is(body[1].line, 'short');
});

dockerTest('GET /api/logs/:service answers 404 when the mapped container does not exist', async (t) => {
  const server = await app(t, { ...SERVICES, secengine: 'lg-absent' });
  const reply = await server.inject({ method: 'GET', url: '/api/logs/secengine' });
  t.is(reply.statusCode, 404);
  t.is(reply.json().id, 'not_found');
  t.regex(reply.json().message, /lg-absent/);
});

dockerTest('GET /api/logs/proxy/advanced without a file reads the proxy container output', async (t) => {
  const server = await app(t);
  await printed(server, 'proxy', 2);
  const reply = await server.inject({ method: 'GET', url: '/api/logs/proxy/advanced' });
  t.is(reply.statusCode, 200);
  t.like(reply.json(), {
    source: 'container:lg-access',
    format: 'json',
    lines_read: 2,
    lines_skipped: 1,
    requests: 1,
    error_rate: 1,
    top_paths: [{ value: '/a', count: 1 }],
  });
  const missing = await app(t, { ...SERVICES, proxy: 'lg-absent' });
  const gone = await missing.inject({ method: 'GET', url: '/api/logs/proxy/advanced' });
  t.is(gone.statusCode, 502);
  t.is(gone.json().id, 'upstream_unavailable');
});

test('GET /api/logs/:service answers 422 for an unknown service or bad query values', async (t) => {
  const server = await build(t, { config: { auth: { mode: 'off' } } });
  for (const url of [
    '/api/logs/traefik',
    '/api/logs/proxy?tail=0',
    '/api/logs/proxy?tail=10001',
    '/api/logs/proxy?stream=both',
    '/api/logs/proxy?since=soon',
  ]) {
    const reply = await server.inject({ method: 'GET', url });
    t.is(reply.statusCode, 422, url);
    t.is(reply.json().id, 'validation_failed', url);
  }
});

test('GET /api/logs/:service answers 502 upstream_unavailable naming Docker when Docker is down', async (t) => {
  const server = await build(t, { config: { auth: { mode: 'off' } } });
  const reply = await server.inject({ method: 'GET', url: '/api/logs/proxy' });
  t.is(reply.statusCode, 502);
  t.is(reply.json().id, 'upstream_unavailable');
  t.regex(reply.json().message, /^Docker at /);
  const stats = await server.inject({ method: 'GET', url: '/api/logs/proxy/advanced' });
  t.is(stats.statusCode, 502);
});
