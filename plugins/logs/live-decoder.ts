/**
 * Incremental form of docker-logs.ts for a followed log stream: chunks arrive cut anywhere, so
 * frame headers and partial lines are carried over to the next chunk.
 */
import { toLogLine, type LogLine, type LogStream } from './docker-logs.ts';

export class LiveLogDecoder {
  private pending: Buffer = Buffer.alloc(0);
  private readonly partial: Record<LogStream, Buffer> = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };

  constructor(
    private readonly tty: boolean,
    private readonly onLine: (line: LogLine) => void,
  ) {}

  /** One chunk of the HTTP body. */
  push(chunk: Buffer): void {
    if (this.tty) {
      this.append('stdout', chunk);
      return;
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (offset + 8 <= this.pending.length) {
      const size = this.pending.readUInt32BE(offset + 4);
      if (offset + 8 + size > this.pending.length) break;
      this.append(
        this.pending[offset] === 2 ? 'stderr' : 'stdout',
        this.pending.subarray(offset + 8, offset + 8 + size),
      );
      offset += 8 + size;
    }
    this.pending = this.pending.subarray(offset);
  }

  /** The stream ended: a last line without `\n` still counts. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.partial[stream].length > 0) this.onLine(toLogLine(this.partial[stream], stream));
      this.partial[stream] = Buffer.alloc(0);
    }
    this.pending = Buffer.alloc(0);
  }

  private append(stream: LogStream, bytes: Buffer): void {
    let data = this.partial[stream].length === 0 ? bytes : Buffer.concat([this.partial[stream], bytes]);
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a)) {
      this.onLine(toLogLine(data.subarray(0, nl), stream));
      data = data.subarray(nl + 1);
    }
    // copy so a long-lived remainder does not pin the whole chunk
    this.partial[stream] = Buffer.from(data);
  }
}
