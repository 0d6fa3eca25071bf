/** Write serialisation: an in-process queue per directory plus a proper-lockfile lock across processes. */
import lockfile from 'proper-lockfile';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

const STALE_MS = 10_000; // API.md §3.4: a lock older than 10 s is stale (its holder died)

/** Runs `fn` while holding the lock of `dir` (a collection dir or a document file); calls for the same target run one after another. */
export class DirectoryLocks {
  private readonly queues = new Map<string, Promise<unknown>>();

  async run<R>(dir: string, fn: () => Promise<R>): Promise<R> {
    const previous = this.queues.get(dir) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.withFileLock(dir, fn));
    this.queues.set(dir, next);
    try {
      return await next;
    } finally {
      if (this.queues.get(dir) === next) this.queues.delete(dir);
    }
  }

  private async withFileLock<R>(dir: string, fn: () => Promise<R>): Promise<R> {
    // the lock is a sibling directory `<target>.lock`, so only the parent must exist
    await mkdir(path.dirname(dir), { recursive: true });
    const release = await lockfile.lock(dir, {
      stale: STALE_MS,
      realpath: false,
      retries: { retries: 200, factor: 1.3, minTimeout: 5, maxTimeout: 100 },
    });
    try {
      return await fn();
    } finally {
      await release().catch(() => undefined); // compromised/removed lock: the write itself already finished
    }
  }
}
