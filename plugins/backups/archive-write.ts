/**
 * Writes a backup archive: gzip'd tar with `manifest.json` first (a listing reads only the head),
 * then the dirs and files under `data/` and `extra/`. Written to a temp name in BACKUP_DIR, fsynced,
 * mode 0600, then renamed into place and the dir fsynced (the discipline of core/store/atomic-write).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Header, Pack, ReadEntry, type WriteEntry } from 'tar';
import { fsyncDir } from '../../core/store/atomic-write.ts';
import type { SourceDir, SourceFile } from './collect.ts';
import { MANIFEST_NAME, type Manifest } from './manifest.ts';

export const ARCHIVE_MODE = 0o600;

/** A source file with the hash taken before the archive is written. */
export type HashedFile = SourceFile & { sha256: string };

/** A file changed or vanished between hashing and archiving: the caller starts over. */
export class SourceChanged extends Error {
  constructor(readonly entry: string) {
    super(`${entry} changed while the backup was written`);
  }
}

/** Files up to this size are hashed from one read; larger ones are streamed. */
const READ_WHOLE_MAX = 8 * 1024 * 1024;

/** Size and SHA-256 of a file. */
export async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  if ((await stat(file)).size <= READ_WHOLE_MAX) {
    const data = await readFile(file);
    return { size: data.length, sha256: hash.update(data).digest('hex') };
  }
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest('hex') };
}

/** Reads started ahead of the one being consumed: file reads overlap in libuv's thread pool. */
const READ_AHEAD = 8;

/**
 * Yields `[item, await read(item)]` in order while up to READ_AHEAD reads run ahead. A read that
 * fails surfaces when its turn comes (never as an unhandled rejection).
 */
export async function* readAhead<T, R>(items: T[], read: (item: T) => Promise<R>): AsyncGenerator<[T, R]> {
  const started: Promise<R>[] = [];
  const start = (index: number) => {
    const promise = read(items[index]);
    promise.catch(() => undefined);
    started[index] = promise;
  };
  for (let i = 0; i < items.length; i++) {
    for (let j = started.length; j < Math.min(items.length, i + READ_AHEAD); j++) start(j);
    const value = await started[i];
    delete started[i]; // the array keeps its length: `started.length` is the next index to start
    yield [items[i], value];
  }
}

export interface EntryFields {
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink' | 'Link';
  mode: number;
  mtime?: Date;
  linkpath?: string;
}

/** Entries handed to the pack and not yet written; below tar's job limit (see entryPack). */
const IN_FLIGHT = 32;

/**
 * tar's Pack fed with entries made from memory. `add` waits while IN_FLIGHT entries are not yet
 * written: the pack stalls for good once more tar entries are pending than its `jobs` limit (its
 * job count then never drops below it, tar 7.5), so the limit is set above the window.
 */
export function entryPack(options: { gzip?: boolean; preservePaths?: boolean } = {}): { pack: Pack; add: (fields: EntryFields, data?: Buffer) => Promise<void> } {
  let latest: WriteEntry | undefined;
  const pending = new Set<Promise<unknown>>();
  const pack = new Pack({
    gzip: options.gzip ?? true, portable: true, preservePaths: options.preservePaths ?? false, jobs: IN_FLIGHT * 2,
    onWriteEntry: (entry) => { latest = entry; },
  });
  const add = async (fields: EntryFields, data?: Buffer) => {
    while (pending.size >= IN_FLIGHT) await Promise.race(pending);
    const read = new ReadEntry(new Header({ ...fields, size: data?.length ?? 0 }));
    latest = undefined;
    pack.add(read);
    const emitter = (latest ?? read) as unknown as NodeJS.EventEmitter;
    // errors surface through the pack's stream; this only tracks completion
    const written: Promise<unknown> = once(emitter, 'end').catch(() => undefined).finally(() => pending.delete(written));
    pending.add(written);
    if (data && data.length > 0) read.write(data);
    read.end();
  };
  return { pack, add };
}

async function produce(add: ReturnType<typeof entryPack>['add'], manifest: Manifest, dirs: SourceDir[], files: HashedFile[]): Promise<void> {
  await add({ path: MANIFEST_NAME, type: 'File', mode: 0o600, mtime: new Date(manifest.created_at) }, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  for (const dir of dirs) await add({ path: `${dir.name}/`, type: 'Directory', mode: dir.mode });
  const read = (file: HashedFile) => readFile(file.absolute).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new SourceChanged(file.name);
    throw err;
  });
  for await (const [file, data] of readAhead(files, read)) {
    // read once, compared with the manifest's hash: the archive holds exactly the bytes it lists
    if (data.length !== file.size || createHash('sha256').update(data).digest('hex') !== file.sha256) throw new SourceChanged(file.name);
    await add({ path: file.name, type: 'File', mode: file.mode, mtime: file.mtime }, data);
  }
}

export interface WriteArchiveOptions {
  manifest: Manifest;
  dirs: SourceDir[];
  files: HashedFile[];
  /** Renames the finished temp file into place (injectable like the restore's renames). */
  rename: (from: string, to: string) => Promise<void>;
}

/** Writes the archive at `target` atomically; returns its size in bytes. */
export async function writeArchive(target: string, options: WriteArchiveOptions): Promise<number> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const { pack, add } = entryPack();
    const sink = createWriteStream(temp, { flags: 'wx', mode: ARCHIVE_MODE });
    const written = pipeline(pack, sink);
    const produced = produce(add, options.manifest, options.dirs, options.files).then(() => { pack.end(); }, (err: unknown) => {
      sink.destroy(err as Error);
      throw err;
    });
    await Promise.all([written, produced]);
    const handle = await open(temp, 'r+');
    try {
      await handle.chmod(ARCHIVE_MODE); // umask may have narrowed it; never wider than 0600 anyway
      await handle.sync();
    } finally {
      await handle.close();
    }
    const { size } = await stat(temp);
    await options.rename(temp, target);
    await fsyncDir(dir);
    return size;
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
