/**
 * One writer per data dir: the server holds a lock in the data dir for its whole lifetime, and a
 * second server on the same dir refuses to start, naming the holder. The lock is proper-lockfile's
 * directory with an mtime refreshed every few seconds, so it also works between containers sharing
 * a volume (different PID namespaces): a holder that stopped refreshing is stale after STALE_MS.
 * On the same host a holder whose pid is gone (SIGKILL, OOM kill) is stale at once, so a restart is
 * never blocked: so is one that is a zombie (killed, not yet reaped by a parent that waits late:
 * `kill(pid, 0)` succeeds on it) or whose pid now belongs to another process (its start time in
 * /proc differs from the one recorded). Both names start with a dot: the store's watcher and
 * backups skip hidden entries.
 */
import { hostname } from 'node:os';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { StartupError } from './startup-checks.ts';

/** proper-lockfile's lock directory. */
export const LOCK_NAME = '.stack-manager.lock';
/** Who holds the lock: `{ pid, host, started_at, proc_start }`. */
export const OWNER_NAME = '.stack-manager.lock.json';
/** A lock not refreshed for this long belongs to a dead holder (another host or PID namespace). */
export const STALE_MS = 30_000;

export interface LockOwner {
  pid: number;
  host: string;
  started_at: string;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot); absent without /proc or in older records. */
  proc_start?: string;
}

/** State (field 3) and start time (field 22) of a process from /proc/<pid>/stat; null without it. */
export function procStat(pid: number): { state: string; start: string } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // gone, or no /proc (not Linux)
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, the fields follow the last ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.length >= 20 ? { state: fields[0], start: fields[19] } : null;
}

export interface DataDirLock {
  readonly file: string;
  release(): Promise<void>;
}

/**
 * The data dir lock's loss as groups may follow it (`app.dataDirLock`, e.g. a notification):
 * server.ts owns the lock across hot reloads and raises `lost` once; a test app never loses one.
 */
export class DataDirLockSignal {
  readonly #listeners = new Set<(err: Error) => void>();

  /** Hears the loss of the lock; returns the unsubscribe function. */
  onLost(listener: (err: Error) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells every listener; one that throws does not stop the others. */
  lost(err: Error): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(err);
      } catch {
        // a listener's failure is its own; the loss is logged by server.ts anyway
      }
    }
  }
}

function readOwner(dataDir: string): LockOwner | null {
  try {
    const owner = JSON.parse(readFileSync(path.join(dataDir, OWNER_NAME), 'utf8')) as LockOwner;
    return typeof owner?.pid === 'number' ? owner : null;
  } catch {
    return null; // not written yet (the holder is starting) or damaged
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}

/** Whether the recorded holder, alive for kill(pid, 0), is a zombie or another process under a reused pid. */
function deadByProc(owner: LockOwner): boolean {
  const stat = procStat(owner.pid);
  if (stat === null) return false; // no /proc: kill(pid, 0) decided
  return (
    stat.state === 'Z' || stat.state === 'X' || (owner.proc_start !== undefined && stat.start !== owner.proc_start)
  );
}

/** A holder on this host whose process is gone or a zombie, a reused pid, or this very pid (a restarted container). */
function deadOnThisHost(owner: LockOwner | null): boolean {
  return (
    owner !== null &&
    owner.host === hostname() &&
    (owner.pid === process.pid || !processAlive(owner.pid) || deadByProc(owner))
  );
}

function describe(owner: LockOwner | null): string {
  return owner
    ? `pid ${owner.pid} on host ${owner.host}, started ${owner.started_at}`
    : 'a process that has not recorded itself yet';
}

/** Takes the data dir's lock or throws a StartupError naming the lock file and the holder. */
export async function lockDataDir(
  dataDir: string,
  options: { onLost?: (err: Error) => void } = {},
): Promise<DataDirLock> {
  const lockPath = path.join(dataDir, LOCK_NAME);
  const take = () =>
    lockfile.lock(dataDir, {
      lockfilePath: lockPath,
      realpath: false,
      stale: STALE_MS,
      update: STALE_MS / 3,
      retries: 0,
      onCompromised: (err) => options.onLost?.(err),
    });
  let release: () => Promise<void>;
  try {
    release = await take();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    const owner = readOwner(dataDir);
    if (!deadOnThisHost(owner)) {
      throw new StartupError(
        `data dir ${path.resolve(dataDir)} is in use: lock ${lockPath} is held by ${describe(owner)}; ` +
          'only one Stack Manager may write a data dir (stop the other one, or remove the lock if that process is gone)',
      );
    }
    rmSync(lockPath, { recursive: true, force: true });
    release = await take();
  }
  const start = procStat(process.pid)?.start;
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    ...(start === undefined ? {} : { proc_start: start }),
  };
  const ownerFile = path.join(dataDir, OWNER_NAME);
  writeFileSync(`${ownerFile}.${process.pid}.tmp`, `${JSON.stringify(owner)}\n`);
  renameSync(`${ownerFile}.${process.pid}.tmp`, ownerFile);
  return {
    file: lockPath,
    release: async () => {
      rmSync(ownerFile, { force: true });
      await release().catch(() => undefined); // already lost (reported through onLost)
    },
  };
}
