/**
 * The last `tail` lines of a container's log for one or both streams. Docker (20.10, json-file and
 * local drivers) applies `tail` to both streams together before its stream filter: `tail=40` of a
 * container writing as much to stdout as to stderr gives 20 stdout lines. A one-stream read
 * therefore asks for both, filters here, and widens the tail (×4) while the filter left fewer than
 * `tail` lines and Docker had more. Shared by GET /api/logs/:service and the WebSocket history.
 */
import type { DockerClient } from '../container/index.ts';
import { logLines, type LogLine } from './docker-logs.ts';
import type { TimeWindow } from './time-window.ts';

/** A one-stream read stops widening here (Docker lines read, both streams). */
const MAX_WIDENED_TAIL = 1_000_000;

export interface TailRequest {
  tail: number;
  window: TimeWindow;
  stdout: boolean;
  stderr: boolean;
}

/** Docker wants seconds since the epoch; fractions keep millisecond bounds. */
const dockerTime = (ms: number): string => (ms / 1000).toFixed(3);

/** Reads the lines (oldest first); Docker's errors (404 included) reach the caller. */
export async function readTail(
  docker: DockerClient,
  container: string,
  tty: boolean,
  request: TailRequest,
): Promise<LogLine[]> {
  const handle = docker.engine.getContainer(container);
  const wanted = (line: LogLine) => (line.stream === 'stdout' ? request.stdout : request.stderr);
  for (let tail = request.tail; ; tail *= 4) {
    const body = await docker.call(`logs of ${container}`, (abortSignal) =>
      handle.logs({
        follow: false,
        stdout: true,
        stderr: true,
        timestamps: true,
        tail,
        ...(request.window.since === null ? {} : { since: dockerTime(request.window.since) }),
        ...(request.window.until === null ? {} : { until: dockerTime(request.window.until) }),
        abortSignal,
      }),
    );
    const all = logLines(Buffer.isBuffer(body) ? body : Buffer.from(body as unknown as string), tty);
    const lines = all.filter(wanted);
    if (lines.length >= request.tail || all.length < tail || tail >= MAX_WIDENED_TAIL)
      return lines.slice(-request.tail);
  }
}

/**
 * Docker's `since` for "from this line on": `<seconds>.<nanoseconds>` of an RFC3339Nano stamp
 * (Docker keeps lines whose time is not before it, so the line itself is included).
 */
export function sinceOf(ts: string): string | null {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return null;
  const seconds = Date.parse(`${m[1]}${m[3]}`) / 1000;
  if (!Number.isFinite(seconds)) return null;
  return `${seconds}.${(m[2] ?? '').padEnd(9, '0').slice(0, 9)}`;
}
