/**
 * Writes a backup archive streaming, in bounded memory (issue 11): every source file is read once,
 * and the same bytes are hashed for the manifest and written into the archive, so a concurrent edit
 * can never make them disagree (no re-read, no "source changed" retry). The file entries go to an
 * uncompressed temp body first; the archive is then gzip(manifest entry, dir entries, body, end
 * blocks): the manifest stays the first entry, as listings and restore expect (archive-read.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, readFile, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Header, Pax } from 'tar';
import { fsyncDir } from '../../core/store/atomic-write.ts';
import { readAhead, ARCHIVE_MODE } from './archive-write.ts';
import type { SourceDir, SourceFile } from './collect.ts';
import { MANIFEST_NAME, type Manifest } from './manifest.ts';

const BLOCK = 512;
/** Files up to this size are read whole (one read, in the thread pool); larger ones are streamed. */
const READ_WHOLE_MAX = 8 * 1024 * 1024;
/** Entries batched into one write of the temp body. */
const FLUSH_BYTES = 1024 * 1024;
const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);

export interface ArchivedFile {
  name: string;
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

const padding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** Appends buffers to a file handle at a tracked position, in batches. */
class BodyWriter {
  position = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly handle: FileHandle) {}

  async append(...buffers: Buffer[]): Promise<void> {
    for (const b of buffers) {
      this.pending.push(b);
      this.pendingBytes += b.length;
    }
    if (this.pendingBytes >= FLUSH_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const data = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    await this.handle.write(data, 0, data.length, this.position);
    this.position += data.length;
  }

  /** A large file: header space reserved, data streamed and hashed, header written with the size read. */
  async appendStreamed(file: SourceFile): Promise<ArchivedFile> {
    await this.flush();
    const headerLength = headerOf({
      path: file.name,
      type: 'File',
      mode: file.mode,
      size: file.size,
      mtime: file.mtime,
    }).length;
    const headerAt = this.position;
    this.position += headerLength;
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(file.absolute, { highWaterMark: FLUSH_BYTES })) {
      hash.update(chunk as Buffer);
      await this.handle.write(chunk as Buffer, 0, (chunk as Buffer).length, this.position);
      this.position += (chunk as Buffer).length;
      size += (chunk as Buffer).length;
    }
    const header = headerOf({ path: file.name, type: 'File', mode: file.mode, size, mtime: file.mtime });
    if (header.length !== headerLength) throw new Error(`${file.name}: header size changed while streaming`);
    await this.handle.write(header, 0, header.length, headerAt);
    await this.append(padding(size));
    return { name: file.name, size, sha256: hash.digest('hex') };
  }
}

/** A file read whole, or null when it vanished since the listing (it is then left out). */
async function readSmall(file: SourceFile): Promise<Buffer | 'large' | null> {
  if (file.size > READ_WHOLE_MAX) return 'large';
  try {
    return await readFile(file.absolute);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Writes the file entries into `bodyFile`; returns what was archived, in order. */
async function writeBody(bodyFile: string, files: SourceFile[]): Promise<ArchivedFile[]> {
  const handle = await open(bodyFile, 'wx', 0o600);
  const archived: ArchivedFile[] = [];
  try {
    const body = new BodyWriter(handle);
    for await (const [file, data] of readAhead(files, readSmall)) {
      if (data === null) continue;
      if (data === 'large') {
        try {
          archived.push(await body.appendStreamed(file));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
        continue;
      }
      // the bytes hashed are the bytes archived
      archived.push({ name: file.name, size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
      await body.append(
        headerOf({ path: file.name, type: 'File', mode: file.mode, size: data.length, mtime: file.mtime }),
        data,
        padding(data.length),
      );
    }
    await body.flush();
  } finally {
    await handle.close();
  }
  return archived;
}

export interface StreamArchiveOptions {
  dirs: SourceDir[];
  files: SourceFile[];
  /** The manifest for the files actually archived (vanished ones are left out). */
  manifestOf: (archived: ArchivedFile[]) => Manifest;
  rename: (from: string, to: string) => Promise<void>;
}

/** Writes `target` atomically (temp name, fsync, 0600, rename, dir fsync); returns its size and manifest. */
export async function writeStreamingArchive(
  target: string,
  options: StreamArchiveOptions,
): Promise<{ size: number; manifest: Manifest }> {
  const dir = path.dirname(target);
  const stem = `.${path.basename(target)}.${randomBytes(6).toString('hex')}`;
  const bodyFile = path.join(dir, `${stem}.body.tmp`);
  const temp = path.join(dir, `${stem}.tmp`);
  try {
    const archived = await writeBody(bodyFile, options.files);
    const manifest = options.manifestOf(archived);
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    const createdAt = new Date(manifest.created_at);
    async function* entries(): AsyncGenerator<Buffer> {
      yield Buffer.concat([
        headerOf({ path: MANIFEST_NAME, type: 'File', mode: 0o600, size: manifestBytes.length, mtime: createdAt }),
        manifestBytes,
        padding(manifestBytes.length),
      ]);
      yield Buffer.concat(
        options.dirs.map((d) =>
          headerOf({ path: `${d.name}/`, type: 'Directory', mode: d.mode, size: 0, mtime: createdAt }),
        ),
      );
      for await (const chunk of createReadStream(bodyFile, { highWaterMark: FLUSH_BYTES })) yield chunk as Buffer;
      yield END_OF_ARCHIVE;
    }
    // gzip runs in the thread pool, chunk by chunk: the event loop only moves buffers
    await pipeline(entries, createGzip(), createWriteStream(temp, { flags: 'wx', mode: ARCHIVE_MODE }));
    const handle = await open(temp, 'r+');
    try {
      await handle.chmod(ARCHIVE_MODE);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const { size } = await stat(temp);
    await options.rename(temp, target);
    await fsyncDir(dir);
    return { size, manifest };
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  } finally {
    await unlink(bodyFile).catch(() => undefined);
  }
}
