/** GET /api/logs/stream/:service: the WebSocket log stream over real sockets against a private dockerd. */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { dockerSkipReason, startEngine, TEST_IMAGE, type Engine } from '../containers/support.ts';

/** The `ws` client (no type package in this project: the few members used are typed here). */
interface Client {
  on(event: 'message', listener: (data: Buffer) => void): void;
  on(event: 'close', listener: (code: number) => void): void;
  on(event: 'open' | 'error', listener: (arg?: unknown) => void): void;
  on(
    event: 'unexpected-response',
    listener: (req: unknown, res: { statusCode: number; on(e: 'data', l: (c: Buffer) => void): void }) => void,
  ): void;
  pause(): void;
  resume(): void;
  close(): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (
  url: string,
  options?: { headers?: Record<string, string> },
) => Client;

const test = anyTest as TestFn<{ engine?: Engine }>;
const skip = dockerSkipReason();
if (skip) console.warn(`SKIP Docker log stream tests: ${skip}`);
const dockerTest = skip ? test.serial.skip : test.serial;

type Message = { type: string; [key: string]: unknown };

test.before(async (t) => {
  if (skip) return;
  const engine = await startEngine();
  t.context.engine = engine;
  const make = async (name: string, script: string) => {
    const c = await engine.docker.createContainer({
      name,
      Image: TEST_IMAGE,
      Cmd: ['sh', '-c', script],
      HostConfig: { NetworkMode: 'none', Init: true },
    });
    await c.start();
  };
  await Promise.all([
    make('ws-tick', 'i=0; while true; do i=$((i+1)); echo "tick $i"; echo "warn $i" >&2; sleep 0.2; done'),
  ]);
});

test.after.always(async (t) => {
  await t.context.engine?.stop();
});

async function listening(
  t: ExecutionContext<{ engine?: Engine }>,
  config: Record<string, unknown> = {},
  withDocker = true,
): Promise<{ app: FastifyInstance; base: string }> {
  const socket = withDocker ? t.context.engine?.socket : undefined;
  const app = await build(t, {
    config: {
      auth: { mode: 'off' },
      ...(socket ? { docker: { host: '', socket } } : {}),
      logs: {
        proxy_access_log: '',
        services: { secengine: 'ws-tick', proxy: 'ws-flood', tunnelapp: 'ws-absent', tunnelgw: 'ws-tick' },
        max_scan_bytes: 1 << 20,
        ws_buffer_lines: 1000,
      },
      ...config,
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { app, base: `ws://127.0.0.1:${port}` };
}

/** Opens a stream and collects its messages; `refused` is the HTTP answer when the upgrade is refused. */
function connect(url: string, headers: Record<string, string> = {}) {
  const client = new WebSocket(url, { headers });
  const messages: Message[] = [];
  const state: { closed?: number; refused?: { status: number; body: string }; open: boolean } = { open: false };
  client.on('message', (data) => messages.push(JSON.parse(data.toString()) as Message));
  client.on('open', () => {
    state.open = true;
  });
  client.on('close', (code) => {
    state.closed = code;
  });
  client.on('error', () => undefined);
  client.on('unexpected-response', (_req, res) => {
    let body = '';
    res.on('data', (chunk) => {
      body += chunk.toString();
    });
    (res as unknown as { on(e: 'end', l: () => void): void }).on('end', () => {
      state.refused = { status: res.statusCode, body };
    });
  });
  return { client, messages, state };
}

const logLines = (messages: Message[], stream?: string) =>
  messages.filter((m) => m.type === 'log' && (!stream || m.stream === stream)).map((m) => m.line as string);

dockerTest('the log stream sends the last tail lines, then live lines', async (t) => {
  const { base } = await listening(t);
  const { client, messages } = connect(`${base}/api/logs/stream/secengine?tail=2&stream=stdout`);
  t.teardown(() => client.close());
  await waitFor(() => logLines(messages).length >= 5, 15_000);
  const numbers = logLines(messages).map((line) => Number(/^tick (\d+)$/.exec(line)![1]));
  t.true(
    numbers.every((n, i) => i === 0 || n === numbers[i - 1] + 1),
    `consecutive: ${numbers.join(',')}`,
  );
  t.true(
    messages.every(
      (m) => m.type === 'log' && m.stream === 'stdout' && typeof m.ts === 'string' && m.truncated === false,
    ),
  );
});

dockerTest('the log stream reports a stop and a start and re-attaches by itself', async (t) => {
  const { base } = await listening(t);
  const { client, messages } = connect(`${base}/api/logs/stream/tunnelgw?tail=1`);
  t.teardown(() => client.close());
  await waitFor(() => logLines(messages).length >= 2, 15_000);
  const container = t.context.engine!.docker.getContainer('ws-tick');
  await container.stop({ t: 1 });
  await waitFor(() => messages.some((m) => m.type === 'status' && m.state === 'exited'), 15_000);
  const before = logLines(messages).length;
  await container.start();
  await waitFor(() => messages.some((m) => m.type === 'status' && m.state === 'running'), 15_000);
  // the restarted shell counts from 1 again; lines shown before the stop are not sent again
  const running = messages.findIndex((m) => m.type === 'status' && m.state === 'running');
  await waitFor(() => logLines(messages.slice(running), 'stdout').length >= 2, 15_000);
  t.true(logLines(messages).length > before);
  t.deepEqual(logLines(messages.slice(running), 'stdout').slice(0, 2), ['tick 1', 'tick 2']);
});

dockerTest('a slow client gets a dropped message when its buffer overflows', async (t) => {
  const { base } = await listening(t, {
    logs: {
      proxy_access_log: '',
      services: { secengine: 'ws-tick', proxy: 'ws-flood', tunnelapp: 'ws-absent', tunnelgw: 'ws-tick' },
      max_scan_bytes: 1 << 20,
      ws_buffer_lines: 10,
    },
  });
  const flood = await t.context.engine!.docker.createContainer({
    name: 'ws-flood',
    Image: TEST_IMAGE,
    HostConfig: { NetworkMode: 'none', Init: true },
    Cmd: [
      'sh',
      '-c',
      'i=0; line=$(printf "%0900d" 0); while [ $i -lt 30000 ]; do i=$((i+1)); echo "$i $line"; done; sleep 1000',
    ],
  });
  const { client, messages, state } = connect(`${base}/api/logs/stream/proxy?tail=0`);
  t.teardown(() => client.close());
  await waitFor(() => state.open, 10_000);
  client.pause();
  await flood.start();
  // the flood is 30000 lines of ~900 bytes, far more than socket buffers hold
  await waitFor(
    async () => {
      const log = await t.context
        .engine!.docker.getContainer('ws-flood')
        .logs({ stdout: true, tail: 1, follow: false });
      return log.toString().includes('30000 ');
    },
    60_000,
    200,
  );
  client.resume();
  await waitFor(() => logLines(messages).some((l) => l.startsWith('30000 ')), 30_000);
  const dropped = messages.filter((m) => m.type === 'dropped');
  t.true(dropped.length > 0);
  t.is(dropped.reduce((sum, m) => sum + (m.count as number), 0) + logLines(messages).length, 30000);
});

dockerTest('the log stream refuses before the upgrade: missing container 404, foreign Origin 403', async (t) => {
  const { base } = await listening(t);
  const missing = connect(`${base}/api/logs/stream/tunnelapp`);
  await waitFor(() => missing.state.refused, 10_000);
  t.is(missing.state.refused!.status, 404);
  t.is(JSON.parse(missing.state.refused!.body).id, 'not_found');
  const foreign = connect(`${base}/api/logs/stream/secengine`, { origin: 'https://evil.example' });
  await waitFor(() => foreign.state.refused, 10_000);
  t.is(foreign.state.refused!.status, 403);
  t.is(JSON.parse(foreign.state.refused!.body).id, 'forbidden');
  const same = connect(`${base}/api/logs/stream/secengine?tail=1`, { origin: base.replace('ws:', 'http:') });
  t.teardown(() => same.client.close());
  await waitFor(() => same.state.open, 10_000);
  t.pass();
});

dockerTest('server shutdown closes log streams with 1001', async (t) => {
  const { app, base } = await listening(t);
  const { messages, state } = connect(`${base}/api/logs/stream/secengine?tail=1`);
  await waitFor(() => messages.length >= 1, 15_000);
  await app.close();
  await waitFor(() => state.closed, 10_000);
  t.is(state.closed, 1001);
});

test('plain GET on the stream route answers 400 websocket_required; unknown service 422', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const plain = await app.inject({ method: 'GET', url: '/api/logs/stream/proxy' });
  t.is(plain.statusCode, 400);
  t.is(plain.json().id, 'websocket_required');
  const unknown = await app.inject({ method: 'GET', url: '/api/logs/stream/nope' });
  t.is(unknown.statusCode, 422);
});

test('the stream route answers 502 before the upgrade when Docker is down', async (t) => {
  const { base } = await listening(t, {}, false);
  const down = connect(`${base}/api/logs/stream/secengine`);
  await waitFor(() => down.state.refused, 10_000);
  t.is(down.state.refused!.status, 502);
  t.is(JSON.parse(down.state.refused!.body).id, 'upstream_unavailable');
});
