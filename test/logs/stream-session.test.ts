/**
 * The delivery path of a log stream without Docker (the dockerd tests cover the real engine): a
 * container start re-attaches while the old stream still delivers; every line reaches the client
 * exactly once (issue 12 item 7: dropped + received was 30204 for 30000 lines), also when the
 * first stream attached after the run began (CI: 29601 of 30000 lines arrived).
 */
import test, { type ExecutionContext } from 'ava';
import { PassThrough } from 'node:stream';
import { LogStreamSession, type LogSocket } from '../../plugins/logs/stream-session.ts';
import type { DockerClient } from '../../plugins/container/docker-client.ts';
import { waitFor } from '../helpers/wait.ts';

const ts = (i: number) =>
  `2030-01-01T00:00:${String(Math.floor(i / 1000)).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}000000Z`;
const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, k) => `${ts(from + k)} line ${from + k}\n`).join('');

function fakeSocket() {
  const sent: Record<string, unknown>[] = [];
  const socket: LogSocket = {
    readyState: 1,
    send(data, callback) {
      sent.push(JSON.parse(data));
      if (callback) setImmediate(callback);
    },
    close() {},
    terminate() {},
    ping() {},
    on() {},
  };
  return { socket, sent };
}

/**
 * A started session on a fake Docker: `events` is the event stream, `logs` answers each attach
 * (its options are recorded in `attaches`), `finishedAt` is the container's State.FinishedAt.
 */
async function startSession(
  t: ExecutionContext,
  options: { finishedAt: string; logs: (attach: number) => Promise<PassThrough> },
) {
  const events = new PassThrough();
  const attaches: Record<string, unknown>[] = [];
  const docker = {
    call: (_what: string, work: (signal: AbortSignal) => Promise<unknown>) => work(new AbortController().signal),
    engine: {
      getEvents: async () => events,
      getContainer: () => ({
        inspect: async () => ({ State: { FinishedAt: options.finishedAt } }),
        logs: async (attach: Record<string, unknown>) => {
          attaches.push(attach);
          return options.logs(attaches.length);
        },
      }),
    },
  } as unknown as DockerClient;
  const { socket, sent } = fakeSocket();
  const noop = () => undefined;
  const session = new LogStreamSession(socket, {
    docker,
    target: { id: 'c1', name: 'proxy', tty: true },
    tail: 0,
    stdout: true,
    stderr: true,
    bufferLines: 100_000,
    log: { warn: noop, info: noop, error: noop, debug: noop } as never,
    pingIntervalMs: 60_000,
  });
  t.teardown(() => session.stop());
  await session.start();
  return { events, attaches, sent };
}

test('a re-attach on container start does not send again what the old stream delivered meanwhile', async (t) => {
  const first = new PassThrough();
  const second = new PassThrough();
  let releaseSecond!: () => void;
  const secondReady = new Promise<void>((resolve) => {
    releaseSecond = resolve;
  });
  const { events, attaches, sent } = await startSession(t, {
    finishedAt: '0001-01-01T00:00:00Z',
    logs: async (attach) => {
      if (attach === 1) return first;
      await secondReady; // Docker takes a while to open the new stream
      return second;
    },
  });

  // the container starts: Docker reports it, and the first stream (attached while created) delivers
  events.write(`${JSON.stringify({ Action: 'start' })}\n`);
  first.write(lines(1, 204));
  await waitFor(() => sent.filter((m) => m.type === 'log').length === 204, 5000);
  // the new stream opens, replaying the whole log (no line was shown when the event came)
  releaseSecond();
  await waitFor(() => attaches.length === 2, 5000);
  second.write(lines(1, 300));
  const received = await waitFor(() => {
    const logs = sent.filter((m) => m.type === 'log');
    return logs.length >= 300 && logs.some((m) => String(m.line).endsWith('line 300')) ? logs : null;
  }, 5000);
  // lines arrive in order: a duplicate of 1–204 would have come before line 300
  const texts = sent.filter((m) => m.type === 'log').map((m) => m.line);
  t.is(texts.length, 300, 'each line exactly once');
  t.is(new Set(texts).size, 300);
  t.is(received[0].line, 'line 1');
  t.true(sent.some((m) => m.type === 'status' && m.state === 'running'));
});

test('a first stream that attached after the run began: the re-attach hands on the lines before it', async (t) => {
  const streams = [new PassThrough(), new PassThrough()];
  const { events, attaches, sent } = await startSession(t, {
    // the previous run ended at second 0.5 (lines up to 500 ms belong to it)
    finishedAt: ts(500),
    logs: async (attach) => streams[attach - 1],
  });
  // tail=0 met a run already going: the first stream starts at line 1400
  streams[0].write(lines(1400, 1600));
  await waitFor(() => sent.filter((m) => m.type === 'log').length === 201, 5000);
  events.write(`${JSON.stringify({ Action: 'start' })}\n`);
  await waitFor(() => attaches.length === 2, 5000);
  t.is(
    attaches[1].since,
    String(Date.parse(ts(0)) / 1000),
    'the new stream starts at the previous run end, in whole seconds',
  );
  // Docker replays from that second: the previous run's tail, then the whole new run
  streams[1].write(lines(400, 1700));
  const logs = await waitFor(() => {
    const got = sent.filter((m) => m.type === 'log');
    return got.length >= 1200 ? got : null;
  }, 5000);
  const numbers = logs.map((m) => Number(String(m.line).split(' ')[1]));
  t.is(numbers.length, 1200, 'lines 501–1700, each once');
  t.is(new Set(numbers).size, 1200);
  t.is(Math.min(...numbers), 501);
  t.is(Math.max(...numbers), 1700);
});
