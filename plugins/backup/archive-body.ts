/**
 * The file entries of a backup, written synchronously (in the archive worker) into an uncompressed
 * tar body file: each source file is opened once, fstat'ed on that descriptor, and read straight
 * into a 1 MiB batch buffer that is hashed and written from the same bytes, so the manifest can
 * never disagree with the archive (issue 11), whatever writes happen meanwhile. Per file this is
 * open, fstat, read (one call when the file fits the batch), close: what GNU tar does, without a
 * promise or a thread-pool hop per call, and without a buffer per file (the batch is reused).
 */
import { createHash, hash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { Header } from 'tar/header';
import { Pax } from 'tar/pax';
import type { SourceFile } from './collect.ts';
import { fitsUstar, writeUstar, type UstarEntry } from './ustar.ts';

export const BLOCK = 512;
/** Bytes gathered before one write of the body file; also the largest read. */
const BATCH = 1024 * 1024;

/** One archived file, in the manifest's own shape (the manifest lists these very objects). */
export interface ArchivedFile {
  /** Path inside the archive. */
  path: string;
  size: number;
  sha256: string;
}

export interface EntryHead {
  path: string;
  type: 'File' | 'Directory';
  mode: number;
  size: number;
  mtime: Date;
}

/** The header block(s) of one entry, portable (no owner names or ids), a PAX header for long paths. */
export function headerOf(entry: EntryHead): Buffer {
  const header = new Header({ ...entry, uid: 0, gid: 0 });
  const needsPax = header.encode();
  if (!needsPax) return header.block!;
  return Buffer.concat([new Pax({ path: entry.path, mtime: entry.mtime, size: entry.size }).encode(), header.block!]);
}

export const paddingOf = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK;

/** Writes all of `data` at `position` (writeSync may write less than asked). */
function writeAll(fd: number, data: Buffer, length: number, position: number): void {
  for (let done = 0; done < length;) done += writeSync(fd, data, done, length - done, position + done);
}

/** A data dir file must not be a link or a FIFO by the time it is opened (O_NONBLOCK: a FIFO never blocks the open). */
const DATA_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const EXTRA_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** Appends tar entries to a body file through one reused batch buffer. */
export class BodyWriter {
  private readonly batch = Buffer.allocUnsafe(BATCH);
  /** A header whose place was already flushed is written from here. */
  private readonly scratch = Buffer.alloc(BLOCK);
  private used = 0;
  /** Body file offset of `batch[0]`. */
  private flushed = 0;

  constructor(private readonly fd: number) {}

  get size(): number {
    return this.flushed + this.used;
  }

  flush(): void {
    writeAll(this.fd, this.batch, this.used, this.flushed);
    this.flushed += this.used;
    this.used = 0;
  }

  /** Room for `bytes` (at most BATCH) in the batch buffer. */
  private room(bytes: number): void {
    if (this.used + bytes > BATCH) this.flush();
  }

  private zeros(bytes: number): void {
    this.room(bytes);
    this.batch.fill(0, this.used, this.used + bytes);
    this.used += bytes;
  }

  /**
   * Reads `fd` to its end into the batch (flushing as it fills) and hashes the bytes read. A read
   * shorter than asked is the end of a regular file: a small file costs one read and a one-shot hash.
   */
  private readAll(fd: number): { size: number; sha256: string } {
    if (this.used === BATCH) this.flush();
    const first = readSync(fd, this.batch, this.used, BATCH - this.used, null);
    const start = this.used;
    this.used += first;
    if (this.used < BATCH) return { size: first, sha256: hash('sha256', this.batch.subarray(start, this.used)) };
    const hasher = createHash('sha256').update(this.batch.subarray(start, this.used));
    let size = first;
    for (;;) {
      this.flush();
      const read = readSync(fd, this.batch, 0, BATCH, null);
      if (read === 0) break;
      hasher.update(this.batch.subarray(0, read));
      this.used = read;
      size += read;
      if (read < BATCH) break;
    }
    return { size, sha256: hasher.digest('hex') };
  }

  /**
   * Archives one file, or returns null when it vanished or is no longer a regular file (then left
   * out, as if the walk had come a moment later). The header is written last, with the size read.
   */
  addFile(file: SourceFile): ArchivedFile | null {
    let fd: number;
    try {
      fd = openSync(file.absolute, file.followLinks ? EXTRA_FLAGS : DATA_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ELOOP') return null; // removed, or replaced by a link
      throw err;
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) return null;
      const mode = info.mode & 0o777;
      const head = (size: number): UstarEntry => ({
        path: file.name,
        typeflag: '0',
        mode,
        size,
        mtime: Math.floor(info.mtimeMs / 1000),
      });
      const slowHeader = (size: number) =>
        headerOf({ path: file.name, type: 'File', mode, size, mtime: new Date(info.mtimeMs) });
      const fast = fitsUstar(head(info.size));
      const headerLength = fast ? BLOCK : slowHeader(info.size).length;
      this.room(headerLength);
      const headerAt = this.size;
      this.used += headerLength;
      const { size, sha256 } = this.readAll(fd);
      // the size read may differ from fstat's when a writer was busy: the header tells what was read
      const entry = head(size);
      if (fast && fitsUstar(entry)) {
        if (headerAt >= this.flushed) writeUstar(this.batch, headerAt - this.flushed, entry);
        else {
          writeUstar(this.scratch, 0, entry);
          writeAll(this.fd, this.scratch, BLOCK, headerAt);
        }
      } else {
        const header = slowHeader(size);
        if (fast || header.length !== headerLength)
          throw new Error(`${file.name}: its size changed while it was archived`);
        if (headerAt >= this.flushed) header.copy(this.batch, headerAt - this.flushed);
        else writeAll(this.fd, header, header.length, headerAt);
      }
      this.zeros(paddingOf(size));
      return { path: file.name, size, sha256 };
    } finally {
      closeSync(fd);
    }
  }
}
