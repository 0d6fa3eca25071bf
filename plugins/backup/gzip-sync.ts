/**
 * A gzip file written synchronously, in bounded memory, in the archive worker: each chunk (1 MiB of
 * the tar stream) is deflated on its own and ends with a sync flush, the last one with the final
 * block, and the pieces form one ordinary gzip member (RFC 1952: header, raw deflate, CRC-32 and
 * size). A sync flush ends at a byte boundary and leaves the block unfinished, so raw deflate
 * segments concatenate into one valid stream; they only cannot refer back across a chunk, which
 * costs well under 1% of size at 1 MiB chunks. Level 6 is gzip's (and `tar czf`'s) default.
 *
 * Why not zlib's streaming Gzip: it runs in the thread pool the main thread's fs calls share, and
 * every chunk it hands back is a fresh buffer that only the garbage collector frees (tens of MiB of
 * RSS during a backup, issue 11). Here the only buffers are the caller's and one output per chunk.
 */
import { writeSync } from 'node:fs';
import { constants, crc32, deflateRawSync } from 'node:zlib';

const LEVEL = 6;
/** ID1 ID2, deflate, no flags, no mtime, no extra flags, OS = Unix. */
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);

export class GzipFileWriter {
  private crc = 0;
  private inputBytes = 0;
  /** Bytes written to the file so far. */
  written = 0;

  constructor(private readonly fd: number) {
    this.put(HEADER);
  }

  private put(data: Buffer): void {
    for (let done = 0; done < data.length;)
      done += writeSync(this.fd, data, done, data.length - done, this.written + done);
    this.written += data.length;
  }

  /** Compresses `data` (it may be reused by the caller once this returns). */
  write(data: Buffer): void {
    if (data.length === 0) return;
    this.crc = crc32(data, this.crc);
    this.inputBytes += data.length;
    this.put(deflateRawSync(data, { level: LEVEL, finishFlush: constants.Z_SYNC_FLUSH }));
  }

  /** The final block and the trailer. */
  end(): void {
    this.put(deflateRawSync(Buffer.alloc(0), { level: LEVEL, finishFlush: constants.Z_FINISH }));
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(this.crc >>> 0, 0);
    trailer.writeUInt32LE(this.inputBytes % 2 ** 32, 4);
    this.put(trailer);
  }
}
