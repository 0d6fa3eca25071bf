/**
 * Reading archives: the manifest at the head (listings), a full scan that hashes every entry
 * without writing anything (restore, before anything changes), and the extraction of validated
 * entries into a staging dir, hashing what it writes. Memory stays bounded: entries over 1 MiB are
 * streamed to their file, smaller ones gathered, at most 16 at a time.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, open } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { Parser, type ReadEntry } from 'tar';
import { MANIFEST_NAME, MAX_MANIFEST_BYTES, parseManifest, type EntryFact, type Manifest } from './manifest.ts';

/** A problem found while reading the archive stream; `entry` names the entry (or the archive). */
export class ArchiveProblem extends Error {
  constructor(
    readonly entry: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ArchiveLimits {
  /** Sum of entry sizes (API.md §2.10: `backup.max_restore_bytes`). */
  maxBytes: number;
  maxEntries: number;
}

const STOP = new Error('stop');

/**
 * Streams `file` through tar's strict parser (any damage is an error) and hands each entry to
 * `onEntry`, which may call `stop` (with an error to fail, without one to end early).
 */
function parseFile(file: string, onEntry: (entry: ReadEntry, stop: (err?: Error) => void) => void): Promise<void> {
  const source = createReadStream(file);
  const parser = new Parser({ strict: true });
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const stop = (err?: Error) => {
      if (settled) return;
      settled = true;
      source.destroy();
      parser.abort(err ?? STOP); // releases the decompressor; its own error events are ignored below
      if (err) reject(err);
      else resolve();
    };
    parser.on('entry', (entry: ReadEntry) => {
      if (settled) return void entry.resume();
      try {
        onEntry(entry, stop);
      } catch (err) {
        stop(err as Error);
      }
    });
    // types tar does not know, and oversized extended headers: reported, never skipped silently
    parser.on('ignoredEntry', (entry: ReadEntry) =>
      stop(new ArchiveProblem(entry.path || '(unnamed entry)', `is an unsupported entry (${entry.type})`)),
    );
    const fail = (err: Error) =>
      stop(
        err === STOP
          ? undefined
          : new ArchiveProblem(path.basename(file), `is not a readable tar.gz archive: ${err.message}`),
      );
    parser.on('error', fail);
    parser.on('abort', fail);
    source.on('error', fail);
    parser.on('end', () => {
      if (!settled) {
        settled = true;
        resolve();
      }
    });
    source.pipe(parser);
  });
}

/** The manifest at the head of an archive, or undefined (no manifest first, damaged, not ours). */
export async function readManifestHead(file: string): Promise<Manifest | undefined> {
  let manifest: Manifest | undefined;
  await parseFile(file, (entry, stop) => {
    if (entry.path !== MANIFEST_NAME || entry.type !== 'File' || entry.size > MAX_MANIFEST_BYTES) return stop();
    const chunks: Buffer[] = [];
    entry.on('data', (chunk: Buffer) => chunks.push(chunk));
    entry.on('end', () => {
      const parsed = parseManifest(Buffer.concat(chunks).toString('utf8'));
      if ('manifest' in parsed) manifest = parsed.manifest;
      stop();
    });
  }).catch(() => undefined);
  return manifest;
}

/** Refuses anything that is not gzip before tar's parser (which also takes plain tar) sees it. */
async function assertGzip(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    if (bytesRead < 2 || buffer[0] !== 0x1f || buffer[1] !== 0x8b)
      throw new ArchiveProblem(path.basename(file), 'is not a gzip file');
  } finally {
    await handle.close();
  }
}

/** Every entry's path, type, size and SHA-256, plus the manifest text; writes nothing. */
export async function scanArchive(
  file: string,
  limits: ArchiveLimits,
): Promise<{ facts: EntryFact[]; manifestText?: string }> {
  await assertGzip(file);
  const facts: EntryFact[] = [];
  const hashed: Promise<unknown>[] = [];
  let bytes = 0;
  let manifestText: string | undefined;
  await parseFile(file, (entry, stop) => {
    if (facts.length >= limits.maxEntries)
      return stop(
        new ArchiveProblem(
          entry.path,
          `the archive has more than ${limits.maxEntries} entries (backup.max_restore_entries)`,
        ),
      );
    bytes += entry.size;
    if (bytes > limits.maxBytes)
      return stop(
        new ArchiveProblem(
          entry.path,
          `the archive holds more than ${limits.maxBytes} bytes uncompressed (backup.max_restore_bytes)`,
        ),
      );
    const fact: EntryFact = { path: entry.path, type: entry.type, size: entry.size };
    facts.push(fact);
    if (entry.type !== 'File') return void entry.resume();
    const isManifest = entry.path === MANIFEST_NAME && entry.size <= MAX_MANIFEST_BYTES;
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let size = 0;
    entry.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
      if (isManifest) chunks.push(chunk);
    });
    hashed.push(
      once(entry, 'end').then(() => {
        fact.size = size;
        fact.sha256 = hash.digest('hex');
        if (isManifest) manifestText = Buffer.concat(chunks).toString('utf8');
      }),
    );
  });
  await Promise.all(hashed);
  return { facts, manifestText };
}

/** Files written at once while extracting: enough to overlap fsyncs, few enough to bound memory. */
const WRITE_CONCURRENCY = 16;

/** Creates `target` with `data` (never over an existing file) and fsyncs it. */
async function writeNewFile(target: string, data: Buffer, mode: number): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const handle = await open(target, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.chmod(mode); // umask may have narrowed it
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Entries larger than this are streamed to their file rather than gathered first. */
const GATHER_MAX = 1024 * 1024;

/** Streams a large entry into a new `target` (never over an existing file), hashing it; fsyncs it. */
async function streamNewFile(
  entry: ReadEntry,
  target: string,
  mode: number,
): Promise<{ size: number; sha256: string }> {
  await mkdir(path.dirname(target), { recursive: true });
  const handle = await open(target, 'wx', mode);
  const hash = createHash('sha256');
  let size = 0;
  try {
    // the entry is not read further while a write is pending: the parser, then the file stream, wait
    for await (const chunk of entry as AsyncIterable<Buffer>) {
      hash.update(chunk);
      await handle.write(chunk);
      size += chunk.length;
    }
    await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { size, sha256: hash.digest('hex') };
}

/**
 * Writes the `wanted` entries (validated paths, dirs without trailing slash) under `dir`: regular
 * files and dirs only, files fsynced. Returns the facts of what was written, hashed on the way,
 * so the caller can hold them against the manifest once more.
 */
export async function extractArchive(file: string, dir: string, wanted: Set<string>): Promise<EntryFact[]> {
  const facts: EntryFact[] = [];
  const writes = new Set<Promise<void>>();
  let failure: Error | undefined;
  const track = (work: Promise<void>, stop: (err?: Error) => void) => {
    const tracked = work
      .catch((err: Error) => {
        failure ??= err;
        stop(err);
      })
      .finally(() => writes.delete(tracked));
    writes.add(tracked);
  };
  await parseFile(file, (entry, stop) => {
    const name = entry.path.replace(/\/$/, '');
    if (!wanted.has(name) || (entry.type !== 'File' && entry.type !== 'Directory')) return void entry.resume();
    const target = path.join(dir, ...name.split('/'));
    const mode = (entry.mode ?? 0o644) & 0o777;
    if (entry.type === 'Directory') {
      facts.push({ path: name, type: 'Directory', size: 0 });
      entry.resume();
      return track(
        mkdir(target, { recursive: true }).then(() => chmod(target, mode)),
        stop,
      );
    }
    const consume = () => {
      if (entry.size > GATHER_MAX) {
        track(
          streamNewFile(entry, target, mode).then(({ size, sha256 }) => {
            facts.push({ path: name, type: 'File', size, sha256 });
          }),
          stop,
        );
        return;
      }
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => {
        const data = Buffer.concat(chunks);
        track(
          writeNewFile(target, data, mode).then(() => {
            facts.push({
              path: name,
              type: 'File',
              size: data.length,
              sha256: createHash('sha256').update(data).digest('hex'),
            });
          }),
          stop,
        );
      });
    };
    // the entry stays paused while the writes are full: the parser, then the file stream, wait
    if (writes.size < WRITE_CONCURRENCY) consume();
    else void Promise.race(writes).then(consume);
  });
  await Promise.all([...writes]);
  if (failure) throw failure;
  return facts;
}
