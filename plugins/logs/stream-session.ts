/**
 * One WebSocket log stream (API.md §4.13): the last `tail` lines, then live lines; re-attaches when
 * the container starts again; a bounded queue per client drops the oldest lines when it cannot keep up.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { DockerClient } from '../container/index.ts';
import { timestampKey, type LogLine } from './docker-logs.ts';
import { LiveLogDecoder } from './live-decoder.ts';
import { readTail, sinceOf } from './tail-read.ts';

/** The part of a `ws` WebSocket the session uses (the project has no `ws` type package). */
export interface LogSocket {
  readonly readyState: number;
  send(data: string, callback?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  ping(): void;
  on(event: 'pong' | 'close', listener: () => void): void;
}

export interface StreamTarget {
  id: string;
  name: string;
  tty: boolean;
}

export interface StreamSessionOptions {
  docker: DockerClient;
  target: StreamTarget;
  tail: number;
  stdout: boolean;
  stderr: boolean;
  /** `logs.ws_buffer_lines`. */
  bufferLines: number;
  log: FastifyBaseLogger;
  pingIntervalMs?: number;
  pongTimeoutMs?: number;
}

const OPEN = 1;
/** Messages handed to the socket but not yet written out; beyond this, lines wait in the queue. */
const MAX_IN_FLIGHT = 32;

type Readable = NodeJS.ReadableStream & { destroy(): void };

export class LogStreamSession {
  private readonly queue: LogLine[] = [];
  private dropped = 0;
  private inFlight = 0;
  /**
   * Set on re-attach: what the new stream must not hand on — lines of the previous run (key up to
   * `before`, the previous run's end) and the range `from`–`to` the old stream already handed on.
   */
  private skip: { before: string; from: string; to: string } | null = null;
  /** Key of the first and the last line the current stream handed on. */
  private sentFrom = '';
  private sentTo = '';
  private logs: Readable | null = null;
  private events: Readable | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastPong = Date.now();
  private stopped = false;

  constructor(
    private readonly socket: LogSocket,
    private readonly options: StreamSessionOptions,
  ) {
    socket.on('close', () => this.stop());
    socket.on('pong', () => {
      this.lastPong = Date.now();
    });
  }

  /** Attaches to the container's log and its start/die events. */
  async start(): Promise<void> {
    const { pingIntervalMs = 30_000, pongTimeoutMs = 60_000 } = this.options;
    this.timer = setInterval(() => {
      if (Date.now() - this.lastPong > pongTimeoutMs) this.socket.terminate();
      else this.socket.ping();
    }, pingIntervalMs);
    try {
      await this.watchEvents();
      await this.attach(await this.history(), '');
    } catch (err) {
      this.fail(err as Error);
    }
  }

  /** Ends the session: Docker streams and timers go; the socket is closed with `code` if still open. */
  stop(code?: number, reason?: string): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.logs?.destroy();
    this.events?.destroy();
    if (code !== undefined && this.socket.readyState === OPEN) this.socket.close(code, reason);
  }

  private fail(err: Error): void {
    if (this.stopped) return;
    this.options.log.warn({ container: this.options.target.name, err: { message: err.message } }, 'log stream failed');
    this.sendNow({ type: 'error', message: err.message });
    this.stop(1011, 'Docker failure');
  }

  /**
   * Where the first attach starts. Docker applies `tail` before its stream filter, so a one-stream
   * follow with `tail=40` sent about 20 lines of history when both streams write alike: such a
   * session finds its last `tail` lines first (tail-read.ts) and follows from the first of them.
   */
  private async history(): Promise<{ tail?: number; since?: string }> {
    const { docker, target, tail, stdout, stderr } = this.options;
    if (tail === 0 || stdout === stderr) return { tail };
    const window = { since: null, until: null };
    const lines = await readTail(docker, target.id, target.tty, { tail, window, stdout, stderr });
    const since = lines.length > 0 ? sinceOf(lines[0].ts) : null;
    return since === null ? { tail: 0 } : { since };
  }

  /** `previousRunEnd`: key of the end of the container's previous run ('' for the first attach). */
  private async attach(from: { tail?: number; since?: string }, previousRunEnd: string): Promise<void> {
    const { docker, target, stdout, stderr } = this.options;
    const container = docker.engine.getContainer(target.id);
    const stream = (await docker.call(`logs of ${target.name}`, (abortSignal) =>
      container.logs({
        follow: true,
        stdout,
        stderr,
        timestamps: true,
        abortSignal,
        ...(from.tail === undefined ? {} : { tail: from.tail }),
        ...(from.since === undefined ? {} : { since: from.since }),
      }),
    )) as Readable;
    if (this.stopped) {
      stream.destroy();
      return;
    }
    if (this.logs) {
      // a re-attach replays the new run from its start (whole seconds): the previous run's lines
      // and the range the old stream handed on up to this moment — including lines that came after
      // the start event while the new stream was being opened — are filtered out. Taken at the
      // event instead, those lines were sent twice (issue 12: dropped + received = 30204 for 30000
      // lines). The old stream may have attached after the run began (a `tail=0` attach racing the
      // start): the lines before its first one are handed on now, after the ones already sent
      // (CI: 29601 of 30000 lines arrived when only "up to the last line sent" was skipped).
      this.skip = { before: previousRunEnd, from: this.sentFrom, to: this.sentTo };
      this.sentFrom = '';
      this.logs.destroy();
    }
    this.logs = stream;
    const decoder = new LiveLogDecoder(target.tty, (line) => this.enqueue(line));
    stream.on('data', (chunk: Buffer) => decoder.push(chunk));
    stream.on('end', () => decoder.end());
    stream.on('error', () => undefined); // a stopped container or our own destroy; events report the state
  }

  /** Docker `start`/`die` events of the container become status messages; a start re-attaches. */
  private async watchEvents(): Promise<void> {
    const { docker, target } = this.options;
    const stream = await docker.call(
      'events',
      (abortSignal) =>
        docker.engine.getEvents({
          filters: { type: ['container'], container: [target.id], event: ['start', 'die'] },
          abortSignal,
        } as never) as unknown as Promise<Readable>,
    );
    this.events = stream;
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const part of parts) if (part.trim()) this.onEvent(JSON.parse(part) as { Action?: string; status?: string });
    });
    stream.on('error', (err: Error) => this.fail(err));
    stream.on('end', () => this.fail(new Error(`Docker ended the event stream of ${target.name}`)));
  }

  private onEvent(event: { Action?: string; status?: string }): void {
    const action = event.Action ?? event.status;
    if (action === 'die') this.sendNow({ type: 'status', state: 'exited' });
    if (action === 'start') {
      this.sendNow({ type: 'status', state: 'running' });
      this.reattach().catch((err: Error) => this.fail(err));
    }
  }

  /**
   * On a start: the new run's lines from its beginning. The previous run ended at the container's
   * `State.FinishedAt` (kept by Docker while the new run goes on; the zero time when it never ran);
   * Docker's `since` takes whole seconds, so the earlier lines of that second are filtered (attach).
   */
  private async reattach(): Promise<void> {
    const { docker, target } = this.options;
    const info = (await docker.call(`inspect of ${target.name}`, () =>
      docker.engine.getContainer(target.id).inspect(),
    )) as { State?: { FinishedAt?: string } };
    if (this.stopped) return;
    const finished = info.State?.FinishedAt ?? '';
    const finishedMs = finished ? Date.parse(finished) : NaN;
    const ran = Number.isFinite(finishedMs) && finishedMs > 0;
    await this.attach(ran ? { since: String(Math.floor(finishedMs / 1000)) } : {}, ran ? timestampKey(finished) : '');
  }

  private enqueue(line: LogLine): void {
    const key = timestampKey(line.ts);
    const skip = this.skip;
    if (skip && (key <= skip.before || (skip.from !== '' && key >= skip.from && key <= skip.to))) return;
    if (this.sentFrom === '') this.sentFrom = key;
    this.sentTo = key;
    this.queue.push(line);
    if (this.queue.length > this.options.bufferLines) {
      this.queue.shift();
      this.dropped++;
    }
    this.flush();
  }

  private flush(): void {
    while (!this.stopped && this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      if (this.dropped > 0) {
        this.send({ type: 'dropped', count: this.dropped });
        this.dropped = 0;
        continue;
      }
      const line = this.queue.shift()!;
      this.send({ type: 'log', ts: line.ts, stream: line.stream, line: line.line, truncated: line.truncated });
    }
  }

  private send(message: object): void {
    if (this.socket.readyState !== OPEN) return;
    this.inFlight++;
    this.socket.send(JSON.stringify(message), () => {
      this.inFlight--;
      this.flush();
    });
  }

  /** Status and error messages skip the queue. */
  private sendNow(message: object): void {
    if (this.socket.readyState === OPEN) this.socket.send(JSON.stringify(message));
  }
}
