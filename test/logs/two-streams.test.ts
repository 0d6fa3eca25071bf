/**
 * Issue 24: a container writing a stdout and a stderr line per turn, paused and unpaused once, read
 * through GET /api/logs/:service and the WebSocket stream against a private dockerd. Docker applies
 * `tail` to both streams together before its stream filter; neither route may lose lines to that,
 * to the pause, or to the merge of the two streams.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { dockerSkipReason, startEngine, TEST_IMAGE, type Engine } from '../containers/support.ts';

interface Client {
  on(event: 'message', listener: (data: Buffer) => void): void;
  on(event: 'error', listener: () => void): void;
  close(): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (url: string) => Client;

type Context = { engine?: Engine };
const test = anyTest as TestFn<Context>;
const skip = dockerSkipReason();
if (skip) console.warn(`SKIP Docker two-stream log tests: ${skip}`);
const dockerTest = skip ? test.serial.skip : test.serial;

type Line = { ts: string; stream: string; line: string };
const CONTAINER = 'lg-pair';
const LOOP = 'i=0; while true; do i=$((i+1)); echo "out $i"; echo "err $i" >&2; sleep 0.1; done';

test.before(async (t) => {
  if (skip) return;
  const engine = await startEngine();
  t.context.engine = engine;
  const container = await engine.docker.createContainer({
    name: CONTAINER,
    Image: TEST_IMAGE,
    Cmd: ['sh', '-c', LOOP],
    HostConfig: { NetworkMode: 'none', Init: true },
  });
  await container.start();
});

test.after.always(async (t) => {
  await t.context.engine?.stop();
});

/** An app on a real port; the container running (a failed test may have left it paused). */
async function listening(t: ExecutionContext<Context>): Promise<{ app: FastifyInstance; port: number }> {
  const container = t.context.engine!.docker.getContainer(CONTAINER);
  if ((await container.inspect()).State.Paused) await container.unpause();
  const app = await build(t, {
    config: {
      auth: { mode: 'off' },
      docker: { host: '', socket: t.context.engine!.socket },
      logs: { proxy_access_log: '', services: { secengine: CONTAINER } },
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as { port: number }).port };
}

async function get(app: FastifyInstance, query: string): Promise<Line[]> {
  const reply = await app.inject({ method: 'GET', url: `/api/logs/secengine?${query}` });
  if (reply.statusCode !== 200) throw new Error(`${reply.statusCode} ${reply.body}`);
  return reply.json<Line[]>();
}

const numberOf = (line: string): number => Number(/^(?:out|err) (\d+)$/.exec(line)![1]);
const consecutive = (numbers: number[]): boolean => numbers.every((n, i) => i === 0 || n === numbers[i - 1] + 1);

/** Waits until the loop has written `count` turns (both lines of each). */
const written = (app: FastifyInstance, count: number) =>
  waitFor(
    async () => {
      const last = await get(app, 'tail=1&stream=stderr');
      return last.length === 1 && numberOf(last[0].line) >= count ? true : null;
    },
    60_000,
    100,
  );

dockerTest('GET tail=40 answers 40 lines, 20 of each stream, after a pause and an unpause', async (t) => {
  const { app } = await listening(t);
  await written(app, 50);
  const container = t.context.engine!.docker.getContainer(CONTAINER);
  await container.pause();
  const paused = await get(app, 'tail=40');
  t.is(paused.length, 40, 'while paused');
  await container.unpause();
  const resumedAt = numberOf((await get(app, 'tail=1&stream=stderr'))[0].line);
  await written(app, resumedAt + 30);

  const both = await get(app, 'tail=40');
  t.is(both.length, 40);
  for (const stream of ['stdout', 'stderr']) {
    const numbers = both.filter((l) => l.stream === stream).map((l) => numberOf(l.line));
    t.true(numbers.length >= 19 && numbers.length <= 21, `${stream}: ${numbers.join(',')}`);
    t.true(consecutive(numbers), `${stream} consecutive: ${numbers.join(',')}`);
  }
  const keys = both.map((l) => `${l.ts.slice(0, 19)}.${l.ts.slice(20, -1).padEnd(9, '0')}`);
  t.deepEqual(keys, [...keys].sort(), 'merged by timestamp');

  for (const stream of ['stdout', 'stderr']) {
    const one = await get(app, `tail=40&stream=${stream}`);
    t.is(one.length, 40, stream);
    t.true(one.every((l) => l.stream === stream));
    t.true(consecutive(one.map((l) => numberOf(l.line))), stream);
  }
});

dockerTest('the WebSocket stream of one stream sends its last tail lines, not half of them', async (t) => {
  const { app, port } = await listening(t);
  await written(app, 100);
  const container = t.context.engine!.docker.getContainer(CONTAINER);
  for (const stream of ['stdout', 'stderr']) {
    // paused, the container writes nothing: the history is exactly the last 40 lines of that stream
    await container.pause();
    const newest = numberOf((await get(app, `tail=1&stream=${stream}`))[0].line);
    const client = new WebSocket(`ws://127.0.0.1:${port}/api/logs/stream/secengine?tail=40&stream=${stream}`);
    t.teardown(() => client.close());
    const lines: Line[] = [];
    client.on('error', () => undefined);
    client.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Line & { type: string };
      if (message.type === 'log') lines.push(message);
    });
    await waitFor(() => lines.some((l) => numberOf(l.line) === newest), 60_000);
    const history = lines.map((l) => numberOf(l.line));
    t.log(`${stream}: ${history.length} lines of history for tail=40`);
    t.deepEqual(
      history,
      Array.from({ length: 40 }, (_, i) => newest - 39 + i),
      stream,
    );
    // then live lines, without a gap after the unpause
    await container.unpause();
    await waitFor(() => lines.length >= 60, 60_000);
    client.close();
    t.true(
      lines.every((l) => l.stream === stream),
      stream,
    );
    const numbers = lines.map((l) => numberOf(l.line));
    t.true(consecutive(numbers), `${stream} consecutive: ${numbers.join(',')}`);
  }
});

dockerTest('the WebSocket stream goes on without a gap across a pause and an unpause', async (t) => {
  const { app, port } = await listening(t);
  await written(app, 10);
  const client = new WebSocket(`ws://127.0.0.1:${port}/api/logs/stream/secengine?tail=10`);
  t.teardown(() => client.close());
  const lines: Line[] = [];
  client.on('error', () => undefined);
  client.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Line & { type: string };
    if (message.type === 'log') lines.push(message);
  });
  await waitFor(() => lines.length >= 20, 60_000);
  const container = t.context.engine!.docker.getContainer(CONTAINER);
  await container.pause();
  const atPause = lines.length;
  await container.unpause();
  await waitFor(() => lines.length >= atPause + 40, 60_000);
  client.close();
  for (const stream of ['stdout', 'stderr']) {
    const numbers = lines.filter((l) => l.stream === stream).map((l) => numberOf(l.line));
    t.true(consecutive(numbers), `${stream} consecutive: ${numbers.join(',')}`);
  }
});
