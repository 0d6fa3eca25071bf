/** Crash-safe file replacement: temp file in the same dir, fsync, rename, fsync the dir (API.md §3.4). */
import { open, rename, unlink, mkdir, chmod, lstat, type FileHandle } from 'node:fs/promises';
import { randomBytes, createHash } from 'node:crypto';
import path from 'node:path';

/** First 32 hex digits of SHA-256: the ETag of stored bytes (API.md §2.7). */
export function hashOf(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 32);
}

/** Makes renames and removals in `dir` durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export interface AtomicWriteOptions {
  /** File mode (0644 unless a secret). */
  mode?: number;
  /** Enforced on the file's own dir even if it existed (secret dirs such as `auth/`, 0700). */
  dirMode?: number;
  /** fsync the dir after the rename (default); batch writers do it once at the end. */
  syncDir?: boolean;
}

/** Writes `content` to `file` so that readers see either the old or the new bytes, never a mix. */
export async function writeAtomic(
  file: string,
  content: string | Buffer,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const { mode = 0o644, dirMode, syncDir = true } = options;
  const dir = path.dirname(file);
  if (dirMode !== undefined) {
    await mkdir(dir, { recursive: true, mode: dirMode });
    await chmod(dir, dirMode); // umask narrows mkdir's mode; an older dir may be wider
  }
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await openCreatingDir(temp, mode);
  try {
    await handle.writeFile(content);
    await handle.chmod(mode); // umask may have narrowed the mode given to open()
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  if (syncDir) await fsyncDir(dir);
}

/**
 * Opens a new temp file, creating its dir only when the open says it is missing: the dir exists for
 * nearly every write, and a mkdir per file was a tenth of a 10,000-file sync (issue 11).
 */
async function openCreatingDir(temp: string, mode: number): Promise<FileHandle> {
  try {
    return await open(temp, 'wx', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(path.dirname(temp), { recursive: true, mode: 0o755 });
    return open(temp, 'wx', mode);
  }
}

/** writeAtomic for bytes, removeDurably for null (a change replicated from the cluster). */
export async function writeOrRemove(
  file: string,
  bytes: string | Buffer | null,
  options: AtomicWriteOptions = {},
): Promise<void> {
  if (bytes === null) await removeDurably(file);
  else await writeAtomic(file, bytes, options);
}

/** Mode of a replicated file that no collection owns, when it is new here: keys and tokens 0600, others 0644. */
export function replicatedFileMode(relative: string): number {
  return relative.startsWith('auth/') || /\.(key|p12)$/.test(relative) ? 0o600 : 0o644;
}

/**
 * Writes (or, for null, removes) a file no collection or document owns as the cluster has it:
 * an existing file keeps its mode, a new one gets replicatedFileMode. The store and the replicator
 * (before a store is attached) write such files alike.
 */
export async function writeRawReplica(dataDir: string, relative: string, bytes: Buffer | null): Promise<void> {
  const file = path.join(dataDir, relative);
  const mode = await lstat(file).then(
    (s) => s.mode & 0o777,
    () => replicatedFileMode(relative),
  );
  await writeOrRemove(file, bytes, { mode });
}

/** Removes a file and makes the removal durable (`syncDir` false: the caller fsyncs the dir); false when it was already gone. */
export async function removeDurably(file: string, syncDir = true): Promise<boolean> {
  try {
    await unlink(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  if (syncDir) await fsyncDir(path.dirname(file));
  return true;
}
