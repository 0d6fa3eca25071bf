/** What collections and documents share: paths, locks, clock, logger, the global change fan-out. */
import type { AnyChangeEvent, StoreReplica } from './types.ts';
import type { DirectoryLocks } from './lock.ts';

export interface StoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface StoreContext {
  dataDir: string;
  locks: DirectoryLocks;
  logger: StoreLogger;
  now(): string;
  emitAny(event: AnyChangeEvent): void;
  /**
   * Called after each write or removal of ours: the file is read once more when the debounce
   * window closes. chokidar re-attaches to a file replaced by rename only after a moment, and an
   * edit made in that moment would otherwise go unseen.
   */
  touched(file: string): void;
  /** Cluster mode: the replication log writes are committed to first (undefined on a standalone server). */
  replica?: StoreReplica;
  /** Path of a data file relative to the data dir, `/`-separated (the replica's keys). */
  relative(file: string): string;
  /**
   * Records the signature (read-data-file signatureOf) of the bytes just read from `file`, null when
   * it is missing: the periodic reconcile reads again a file whose stat no longer matches.
   */
  read(file: string, signature: string | null): void;
  /** Runs a bulk write of a collection dir without the watcher on it (see Store.quiet). */
  quiet<R>(dir: string, fn: () => Promise<R>): Promise<R>;
}

/**
 * How a file read after a watcher event is judged: `leading` (first event of a burst: apply only
 * if valid), `normal` (end of the burst: report invalid files, retry syntax errors once), `final`.
 */
export type Attempt = 'leading' | 'normal' | 'final';
