/**
 * Docker log bodies → lines (FORMATS.md C2): multiplexed frames (non-TTY) or the raw stream (TTY,
 * all stdout), split on `\n` per stream, the `timestamps=1` prefix taken off, long lines cut.
 */

export type LogStream = 'stdout' | 'stderr';

export interface LogLine {
  ts: string;
  stream: LogStream;
  line: string;
  truncated: boolean;
}

/** API.md §2.10: lines longer than 16 KiB are cut and flagged. */
export const MAX_LINE_BYTES = 16 * 1024;

/** The payloads of a multiplexed body, in order; a cut-off last frame keeps what arrived. */
export function demultiplex(body: Buffer): { stream: LogStream; payload: Buffer }[] {
  const frames: { stream: LogStream; payload: Buffer }[] = [];
  let offset = 0;
  while (offset + 8 <= body.length) {
    const type = body[offset];
    const size = body.readUInt32BE(offset + 4);
    const payload = body.subarray(offset + 8, Math.min(body.length, offset + 8 + size));
    // 0 = stdin echoed on stdout, 1 = stdout, 2 = stderr
    frames.push({ stream: type === 2 ? 'stderr' : 'stdout', payload });
    offset += 8 + size;
  }
  return frames;
}

/** Splits `<RFC3339Nano> <text>`; a line without a timestamp keeps an empty `ts`. */
export function toLogLine(raw: Buffer, stream: LogStream): LogLine {
  const space = raw.indexOf(0x20);
  const head = space > 0 ? raw.subarray(0, space).toString('latin1') : '';
  const hasTs = /^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)$/.test(head);
  let text = hasTs ? raw.subarray(space + 1) : raw;
  if (text.length > 0 && text[text.length - 1] === 0x0d) text = text.subarray(0, text.length - 1);
  const truncated = text.length > MAX_LINE_BYTES;
  // a cut inside a UTF-8 sequence decodes to U+FFFD: dropped
  const line = truncated
    ? text
        .subarray(0, MAX_LINE_BYTES)
        .toString('utf8')
        .replace(/\uFFFD+$/, '')
    : text.toString('utf8');
  return { ts: hasTs ? head : '', stream, line, truncated };
}

/** Lines of one stream's concatenated bytes; a last line without `\n` still counts. */
function splitLines(bytes: Buffer, stream: LogStream): LogLine[] {
  const lines: LogLine[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
    lines.push(toLogLine(bytes.subarray(start, nl), stream));
    start = nl + 1;
  }
  if (start < bytes.length) lines.push(toLogLine(bytes.subarray(start), stream));
  return lines;
}

/**
 * Sort key of a Docker timestamp: RFC3339Nano drops trailing zeros of the fraction, so the
 * fraction is padded to 9 digits before strings compare.
 */
export function timestampKey(ts: string): string {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/.exec(ts);
  if (!m) return ts;
  return `${new Date(`${m[1]}${m[3] || 'Z'}`).toISOString().slice(0, 19)}.${(m[2] ?? '').padEnd(9, '0')}`;
}

/** Frames (or the raw TTY body) → lines of both streams, merged by timestamp (stable within a stream). */
export function logLines(body: Buffer, tty: boolean): LogLine[] {
  if (tty) return splitLines(body, 'stdout');
  const parts: Record<LogStream, Buffer[]> = { stdout: [], stderr: [] };
  for (const frame of demultiplex(body)) parts[frame.stream].push(frame.payload);
  const lines = [
    ...splitLines(Buffer.concat(parts.stdout), 'stdout'),
    ...splitLines(Buffer.concat(parts.stderr), 'stderr'),
  ];
  const keyed = lines.map((line) => ({ line, key: timestampKey(line.ts) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.line);
}
