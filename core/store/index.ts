/** The YAML file store: the only code that touches files under the data dir (API.md §3). */
import { lstatSync, readFileSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { writeAtomic, writeRawReplica } from './atomic-write.ts';
import { FileCollection } from './collection.ts';
import type { Attempt, StoreContext, StoreLogger } from './context.ts';
import { FileDocument } from './document.ts';
import { DirectoryLocks } from './lock.ts';
import { readDataFile, signatureOf } from './read-data-file.ts';
import { commitRestore } from './restore-commit.ts';
import { removeStaleTempFiles, STALE_TEMP_MS } from './temp-files.ts';
import type {
  AnyChangeEvent,
  ChangeSource,
  Collection,
  CollectionOptions,
  DocumentOptions,
  InvalidFile,
  StoreDocument,
  StoreReplica,
  YamlStore,
} from './types.ts';

export type * from './types.ts';
export { StoreError, isStoreError, type StoreErrorKind } from './errors.ts';

export interface StoreOptions {
  dataDir: string;
  logger: StoreLogger;
  /**
   * Watch for hand edits (default true). `later`: not until startWatching(), which then catches up
   * on what changed meanwhile. The server starts watching a second after the app is ready: chokidar's first
   * walk (an lstat and an fs.watch per file) is about half a second per 2,000 files, and the first
   * full provider config need not wait for it (issue 11).
   */
  watch?: boolean | 'later';
  /** Debounce per file (API.md §3.3: 300 ms). */
  debounceMs?: number;
  now?: () => string;
  /** Cluster mode: the replication log writes are committed to first (core/cluster/replication.ts). */
  replica?: StoreReplica;
  /**
   * `auto` (default): chokidar on inotify, one kernel watch per file and dir, switched to polling
   * when the kernel's watch limit is reached; `poll`: always polling (storage.watch).
   */
  watchMode?: 'auto' | 'poll';
  /** Polling: how often each file's stat is compared (storage.poll_interval_ms, default 2000). */
  pollIntervalMs?: number;
  /**
   * Safety net under the inotify watcher: every `reconcileMs` each data file's stat (inode, size,
   * mtime) is compared with what was last read from it, and a file that differs is read again, so
   * an edit the watcher never reported is taken within that time (default 10000; 0: never). Not
   * while polling (polling is that comparison already).
   */
  reconcileMs?: number;
}

const DEFAULT_RECONCILE_MS = 10_000;
/** Files the reconcile stats between two turns of the event loop (≈ 2 µs each from the cache). */
const RECONCILE_SLICE = 256;

const DEFAULT_POLL_INTERVAL_MS = 2000;

/**
 * A watcher error that means the kernel gave no more inotify watches (ENOSPC: the per-user
 * fs.inotify.max_user_watches, shared by every process of the same uid, containers included) or
 * no more descriptors (EMFILE).
 */
function isWatchLimit(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EMFILE';
}

/**
 * The inotify watch limit that applies, for the log line: the host's sysctl and, inside a user
 * namespace, the namespace's own (lower) one; null where /proc does not say.
 */
function inotifyWatchLimit(): number | null {
  const limits = ['/proc/sys/fs/inotify/max_user_watches', '/proc/sys/user/max_inotify_watches'].flatMap((file) => {
    try {
      const value = Number(readFileSync(file, 'utf8').trim());
      return Number.isSafeInteger(value) && value > 0 ? [value] : [];
    } catch {
      return [];
    }
  });
  return limits.length > 0 ? Math.min(...limits) : null;
}

/** chokidar's directory rescan is throttled to 1 s; the second look after our own write comes after it. */
const RECHECK_AFTER_WRITE_MS = 1200;

type AnyListener = (event: AnyChangeEvent) => void;

/**
 * How long chokidar may stay silent about a path after reporting it: a `change` within 50 ms of the
 * previous one is dropped (see Store.schedule); 60 ms leaves a margin for timer granularity.
 */
const WATCHER_THROTTLE_MS = 60;

/** An open debounce window of one file: events inside it are coalesced into one closing read. */
interface DebounceWindow {
  timer: NodeJS.Timeout | undefined;
  /** How the closing read judges the file. */
  attempt: Attempt;
  /** Date.now() when the timer fires. */
  closesAt: number;
}

/**
 * Paths the watcher never reports: hidden files and dirs (`.cache`, temp files, editors' swap
 * files), `*.tmp`, lock dirs and the audit log. Called for every entry of every directory scan, so
 * it looks at the base name only (chokidar does not descend into an ignored dir).
 */
function ignored(dataDir: string, file: string): boolean {
  if (file.length <= dataDir.length) return false;
  const base = path.basename(file);
  return (
    base.startsWith('.') ||
    base.endsWith('.tmp') ||
    base.endsWith('.lock') ||
    (base.startsWith('audit.log') && path.dirname(file) === dataDir)
  );
}

/** How long a new data dir may take to be reported by the watcher before it is added explicitly. */
const ATTACH_WAIT_MS = 500;

class Store implements YamlStore {
  readonly dataDir: string;
  private readonly ctx: StoreContext;
  private readonly collections: FileCollection<unknown>[] = [];
  private readonly documents: FileDocument<unknown>[] = [];
  /** Date.now() at open(): startWatching() catches up on files modified since. */
  private openedAt = 0;
  private readonly anyListeners = new Set<AnyListener>();
  /** Open debounce windows per file: events inside one are coalesced into one closing read. */
  private readonly windows = new Map<string, DebounceWindow>();
  /** Reads of one file run one after another. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private watcher: FSWatcher | null = null;
  /** Settles when the current watcher has walked the data dir (its 'ready'). */
  private watcherReady: Promise<void> = Promise.resolve();
  /** Date.now() when the current watcher was started: a switch to polling catches up from there. */
  private watcherStartedAt = 0;
  /** The watcher polls: storage.watch is `poll`, or the kernel's watch limit was reached. */
  private polling: boolean;
  private readonly pollIntervalMs: number;
  private readonly dirWaiters = new Map<string, () => void>();
  private readonly recheckTimers = new Set<NodeJS.Timeout>();
  /** Dirs written in bulk right now (their writes are caught up at the end, not one by one). */
  private readonly quietDirs = new Set<string>();
  /** Signature of the bytes last read from each data file (Store.reconcile). */
  private readonly signatures = new Map<string, string>();
  private reconcileTimer: NodeJS.Timeout | undefined;
  private reconciling = false;
  private closed = false;

  constructor(private readonly options: StoreOptions) {
    this.dataDir = path.resolve(options.dataDir);
    this.polling = options.watchMode === 'poll';
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.ctx = {
      dataDir: this.dataDir,
      locks: new DirectoryLocks(),
      logger: options.logger,
      now: options.now ?? (() => new Date().toISOString()),
      replica: options.replica,
      relative: (file) => path.relative(this.dataDir, file).split(path.sep).join('/'),
      quiet: (dir, fn) => this.quiet(dir, fn),
      touched: (file) => this.touched(file),
      read: (file, signature) => {
        if (signature === null) this.signatures.delete(file);
        else this.signatures.set(file, signature);
      },
      emitAny: (event) => {
        for (const listener of this.anyListeners) {
          try {
            listener(event);
          } catch (err) {
            options.logger.error({ err }, 'store change listener failed');
          }
        }
      },
    };
  }

  async open(): Promise<void> {
    this.openedAt = Date.now();
    await mkdir(this.dataDir, { recursive: true });
    const removed = await removeStaleTempFiles(this.dataDir, Date.now() - STALE_TEMP_MS);
    if (removed > 0) this.options.logger.info({ removed }, 'removed temp files left by interrupted writes');
    if (this.options.watch === false) return;
    const every = this.options.reconcileMs ?? DEFAULT_RECONCILE_MS;
    if (every > 0) {
      this.reconcileTimer = setInterval(() => {
        if (this.closed || this.reconciling || !this.watcher || this.polling) return;
        this.reconciling = true;
        this.track(
          this.reconcile()
            .catch((err) => this.options.logger.error({ err }, 'the periodic check of the data files failed'))
            .finally(() => (this.reconciling = false)),
        );
      }, every);
      this.reconcileTimer.unref();
    }
    if (this.options.watch === 'later') return;
    await this.startWatcher();
  }

  /**
   * The safety net under the watcher (reconcileMs): every data file whose stat differs from the
   * bytes last read from it, every file that appeared and every held object whose file is gone is
   * read again through the usual debounce. The watcher reports each of them first in practice
   * (test/core/hand-edit-timing); what is found here is logged, since it may mean an event was lost.
   * Costs a readdir per collection and an lstat per file: ≈ 40 ms of CPU per 20,000 files, in slices.
   */
  private async reconcile(): Promise<void> {
    const missed: string[] = [];
    const look = (file: string, signature: string | undefined) => {
      if (this.signatures.get(file) === signature || this.windows.has(file) || this.chains.has(file)) return;
      missed.push(file);
    };
    let statted = 0;
    for (const collection of this.collections) {
      if (this.quietDirs.has(collection.dir)) continue;
      let names: string[];
      try {
        names = await readdir(collection.dir);
      } catch {
        continue; // the dir is gone: its watcher event (unlinkDir) resyncs it
      }
      if (this.closed || !this.watcher || this.quietDirs.has(collection.dir)) return;
      const listed = new Set<string>();
      for (const name of names) {
        const file = path.join(collection.dir, name);
        if (!collection.owns(file)) continue;
        listed.add(file);
        const stats = lstatSync(file, { throwIfNoEntry: false });
        if (stats?.isFile()) look(file, signatureOf(stats));
        if (++statted % RECONCILE_SLICE === 0) await nextTurn();
      }
      for (const object of collection.list()) if (!listed.has(object.file)) look(object.file, undefined);
    }
    for (const document of this.documents) {
      const stats = lstatSync(document.path, { throwIfNoEntry: false });
      look(document.path, stats ? signatureOf(stats) : undefined);
    }
    if (this.closed || !this.watcher || missed.length === 0) return;
    // info, not a warning: a change made while this ran may simply not have been reported yet
    this.options.logger.info(
      { files: missed.slice(0, 10).map((file) => this.ctx.relative(file)), count: missed.length },
      `the periodic check found ${missed.length} data file(s) changed without a watcher event; reading them again`,
    );
    for (const file of missed) this.schedule(file, 'normal');
  }

  /**
   * `watch: 'later'`: attaches the watcher now, then takes in what changed on disk since the store
   * was opened (files by mtime, every document). Until then the data dir is read but not watched.
   */
  async startWatching(): Promise<void> {
    if (this.options.watch !== 'later' || this.watcher || this.closed) return;
    const since = this.openedAt - 1000; // mtime granularity and clock skew margin
    await this.startWatcher();
    if (this.closed) return;
    for (const collection of this.collections) await collection.catchUp(since);
    for (const document of this.documents) await document.ingest('file', 'final');
  }

  private async startWatcher(): Promise<void> {
    const interval = this.pollIntervalMs;
    this.watcherStartedAt = Date.now();
    const polling = this.polling;
    const watcher = watch(this.dataDir, {
      ignoreInitial: true,
      ignored: (file) => ignored(this.dataDir, file),
      depth: 4,
      usePolling: polling,
      interval,
      binaryInterval: interval,
    });
    this.watcher = watcher;
    this.watcherReady = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    const onEvent = (file: string) => this.schedule(path.resolve(file));
    watcher.on('add', onEvent).on('change', onEvent).on('unlink', onEvent);
    const onDir = (dir: string) => {
      this.dirWaiters.get(path.resolve(dir))?.();
      const collection = this.collections.find((c) => c.dir === path.resolve(dir));
      if (collection) this.rescan(collection, () => collection.resync());
    };
    watcher.on('addDir', onDir).on('unlinkDir', onDir);
    watcher.on('error', (err) => {
      if (!isWatchLimit(err)) this.options.logger.error({ err }, 'data dir watcher error');
      else if (!this.polling) this.switchToPolling(watcher, err as NodeJS.ErrnoException);
      // else: the rest of the inotify walk after the switch, failing the same way (logged once)
    });
    await this.watcherReady;
    if (this.closed) await watcher.close();
    else if (polling)
      this.options.logger.info({ interval_ms: interval }, `watching the data dir by polling every ${interval} ms`);
  }

  /**
   * The kernel refused a watch: files past that point would never report a hand edit. The inotify
   * watcher finishes its walk (the remaining watches fail at once), is closed, which gives its watches
   * back, and a polling one takes over; what changed since the inotify watcher started is caught up
   * from mtimes, as at startup. Logged once, with the limit and how to raise it.
   */
  private switchToPolling(from: FSWatcher, err: NodeJS.ErrnoException): void {
    this.polling = true;
    const interval = this.pollIntervalMs;
    const limit = inotifyWatchLimit();
    this.options.logger.warn(
      { code: err.code, path: (err as { path?: string }).path, max_user_watches: limit, interval_ms: interval },
      `the data dir watcher reached the kernel's inotify limit (${err.code}${limit ? `, fs.inotify.max_user_watches = ${limit}` : ''}): ` +
        `hand edits are now found by polling every ${interval} ms. To watch with inotify again, raise the limit on the host ` +
        `(sysctl fs.inotify.max_user_watches=524288; every file and dir of the data dir takes one watch) and restart`,
    );
    const since = this.watcherStartedAt - 1000; // mtime granularity and clock skew margin
    this.track(
      (async () => {
        await this.watcherReady;
        // reload() or close() replaced or closed it meanwhile: the next watcher polls already
        if (this.closed || this.watcher !== from) return;
        this.watcher = null;
        await from.close();
        if (this.closed) return;
        await this.startWatcher();
        if (this.closed) return;
        for (const collection of this.collections) await collection.catchUp(since);
        for (const document of this.documents) await document.ingest('file', 'final');
      })().catch((error) =>
        this.options.logger.error({ err: error }, 'the switch to polling failed; hand edits need a restart'),
      ),
    );
  }

  async collection<T>(options: CollectionOptions<T>): Promise<Collection<T>> {
    if (this.collections.some((c) => c.name === options.name))
      throw new Error(`store: collection ${options.name} registered twice`);
    const collection = new FileCollection<T>(this.ctx, options);
    await this.ensureWatchedDir(collection.dir);
    await collection.scan();
    this.collections.push(collection as FileCollection<unknown>);
    return collection;
  }

  async document<T>(options: DocumentOptions<T>): Promise<StoreDocument<T>> {
    const document = new FileDocument<T>(this.ctx, options);
    await this.ensureWatchedDir(path.dirname(document.path));
    await document.ingest('startup', 'final');
    this.documents.push(document as FileDocument<unknown>);
    return document;
  }

  invalidFiles(): InvalidFile[] {
    return [
      ...this.collections.flatMap((c) => c.invalidFiles()),
      ...this.documents.flatMap((d) => d.invalidFiles()),
      ...(this.options.replica?.conflicts() ?? []),
    ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  onAnyChange(listener: AnyListener): () => void {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  async writeRaw(relativePath: string, content: string | Buffer, mode = 0o644, dirMode?: number): Promise<void> {
    const file = this.resolveInside(relativePath);
    // raw files (certificates, the initial token) are replicated last-writer-wins; caches (hidden) stay local
    if (this.options.replica && !relativePath.split('/').some((part) => part.startsWith('.'))) {
      // `stale` has brought this node up to the cluster's version: committing again then succeeds
      for (let attempt = 0; attempt < 5; attempt++)
        if ((await this.options.replica.commit(this.ctx.relative(file), content)) === 'ok') break;
    }
    await writeAtomic(file, content, { mode, dirMode });
  }

  async applyRemote(
    relativePath: string,
    bytes: Buffer | null,
    stillNewer?: () => boolean,
    source: ChangeSource = 'cluster',
  ): Promise<void> {
    const file = this.resolveInside(relativePath);
    const collection = this.collections.find((c) => c.owns(file));
    if (collection) return collection.applyRemote(file, bytes, stillNewer, source);
    const document = this.documents.find((d) => d.owns(file));
    if (document) return document.applyRemote(bytes, stillNewer, source);
    // a file no collection or document of this node owns (a raw file, a plugin's collection that
    // is not installed here): kept on disk as the cluster has it; a restored one is committed first
    if (source === 'restore') await commitRestore(this.options.replica, this.ctx.relative(file), bytes);
    await writeRawReplica(this.options.dataDir, path.relative(this.options.dataDir, file), bytes);
  }

  checkRaw(relativePath: string, bytes: Buffer | null): InvalidFile | null {
    const file = this.resolveInside(relativePath);
    if (bytes === null) return null;
    const collection = this.collections.find((c) => c.owns(file));
    if (collection) return collection.check(file, bytes);
    return this.documents.find((d) => d.owns(file))?.check(bytes) ?? null;
  }

  async readRaw(relativePath: string): Promise<Buffer | undefined> {
    // raw files (certificates, caches) may be larger than a YAML data file, but never a symlink
    const read = await readDataFile(this.resolveInside(relativePath), Number.MAX_SAFE_INTEGER);
    if (read.kind === 'refused') throw new Error(`store: ${relativePath} ${read.message}`);
    return read.kind === 'ok' ? read.bytes : undefined;
  }

  async settle(): Promise<void> {
    while (this.windows.size > 0 || this.inFlight.size > 0) {
      await Promise.all([...this.inFlight]);
      if (this.windows.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async reload(replace?: () => Promise<void>): Promise<void> {
    if (this.closed) return replace?.();
    // inotify follows inodes: the watcher would follow moved-away dirs (and report every step of a
    // swap), and chokidar shares its fs.watch handles by path: it is closed, then started afresh
    const watching = this.watcher !== null;
    const previous = this.watcher;
    this.watcher = null;
    await previous?.close();
    // reads still pending from before (debounce windows, the re-checks after our own writes) would
    // ingest the new tree's files as hand edits (source `file`) if they fired during the swap; the
    // resync below reads every file anyway, with source `restore`
    this.dropPendingReads();
    await Promise.all([...this.inFlight]);
    try {
      await replace?.();
    } finally {
      if (!this.closed) {
        // a collection dir the new tree lacks is created first, so the new watcher attaches to it
        for (const collection of this.collections) await mkdir(collection.dir, { recursive: true });
        if (watching) await this.startWatcher();
        for (const collection of this.collections) {
          await collection.resync('restore');
          // invalid files of the old tree: a missing one leaves the list, a present one is judged again
          for (const file of collection.invalidFiles()) await collection.ingest(file.path, 'restore', 'final');
        }
        for (const document of this.documents) await document.ingest('restore', 'final');
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.reconcileTimer);
    this.dropPendingReads();
    await this.watcher?.close();
    await Promise.all([...this.inFlight]);
  }

  /** Cancels the debounce windows and the re-checks after our own writes that have not fired yet. */
  private dropPendingReads(): void {
    for (const { timer } of this.windows.values()) clearTimeout(timer);
    this.windows.clear();
    for (const timer of this.recheckTimers) clearTimeout(timer);
    this.recheckTimers.clear();
  }

  /**
   * Creates a collection dir up front and waits until the watcher has attached to it, so a file
   * created and removed right after startup is never missed.
   */
  private async ensureWatchedDir(dir: string): Promise<void> {
    if (!this.watcher) {
      await mkdir(dir, { recursive: true });
      return;
    }
    // the waiter is in place before mkdir: chokidar may report the new dir before mkdir's own
    // callback runs
    let reported!: () => void;
    const attached = new Promise<void>((resolve) => (reported = resolve));
    this.dirWaiters.set(dir, reported);
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!(await mkdir(dir, { recursive: true }))) return;
      const seen = await Promise.race([
        attached.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ATTACH_WAIT_MS))),
      ]);
      // chokidar never watches a dir made right after its parent appeared (it lists the parent
      // before the child exists and attaches to the parent after): `mtls/clients` on a first start
      // went unwatched, so hand edits there were never seen. Added explicitly it is watched, and
      // what was written before it attached is found by a second look at the dir.
      if (!seen && this.watcher) {
        this.options.logger.info({ dir }, 'the watcher missed a new data dir; added it explicitly');
        this.watcher.add(dir);
        this.recheckLater(() => {
          const collection = this.collections.find((c) => c.dir === dir);
          if (collection) this.rescan(collection, () => collection.resync());
        });
      }
    } finally {
      clearTimeout(timer);
      this.dirWaiters.delete(dir);
    }
  }

  private resolveInside(relativePath: string): string {
    const resolved = path.resolve(this.dataDir, relativePath);
    if (!resolved.startsWith(this.dataDir + path.sep))
      throw new Error(`store: path ${relativePath} leaves the data dir`);
    return resolved;
  }

  /**
   * Debounce with a leading edge (API.md §3.3: 300 ms per file). The first event of a burst is
   * read at once and applied only if the file is valid, so an edit is served within milliseconds;
   * the window then always ends with one more read (of the bytes as they are by then: unchanged
   * ones cost a hash), which also catches a file caught half-written by the leading read.
   *
   * That closing read is not optional: chokidar does not report every change. It drops a `change`
   * that comes within 50 ms of the previous one for the same path, and an fs.watch callback within
   * 5 ms of the previous one, with no trailing event (chokidar 4, `_throttle`). A second hand edit
   * made up to 50 ms after the first (two saves, an in-place write's truncate then its write) was
   * never reported; when the window had seen no second event it closed without reading, and the
   * edit was lost until the file changed again (test/core/hand-edit-timing: 22 of 144 edits lost,
   * all 0-50 ms after a hand edit). Every event therefore also keeps its window open until
   * WATCHER_THROTTLE_MS after it, so the closing read comes after anything chokidar swallowed.
   */
  private schedule(file: string, attempt: Attempt = 'leading'): void {
    if (this.closed) return;
    const open = this.windows.get(file);
    if (open) {
      if (attempt === 'final') open.attempt = 'final';
      // an event near the end of the window: the closing read must come after what chokidar may
      // swallow behind it
      if (open.closesAt - Date.now() < WATCHER_THROTTLE_MS) this.armWindow(file, open, WATCHER_THROTTLE_MS);
      return;
    }
    const window: DebounceWindow = {
      attempt: attempt === 'leading' ? 'normal' : attempt,
      timer: undefined,
      closesAt: 0,
    };
    this.armWindow(file, window, Math.max(this.options.debounceMs ?? 300, WATCHER_THROTTLE_MS));
    this.windows.set(file, window);
    if (attempt === 'leading') this.enqueue(file, 'leading');
  }

  /** (Re)starts a window's timer: it closes `ms` from now with a read. */
  private armWindow(file: string, window: DebounceWindow, ms: number): void {
    clearTimeout(window.timer);
    window.closesAt = Date.now() + ms;
    window.timer = setTimeout(() => {
      if (this.windows.get(file) !== window) return;
      this.windows.delete(file);
      this.enqueue(file, window.attempt);
    }, ms);
  }

  private enqueue(file: string, attempt: Attempt): void {
    const previous = this.chains.get(file) ?? Promise.resolve();
    const next = previous.then(() => this.process(file, attempt));
    this.chains.set(file, next);
    this.track(
      next.finally(() => {
        if (this.chains.get(file) === next) this.chains.delete(file);
      }),
    );
  }

  /** Makes sure the file is read once more: by its open window's closing read, else by a new window. */
  private markDirty(file: string): void {
    if (!this.windows.has(file)) this.schedule(file, 'normal');
  }

  /**
   * Runs a bulk write with the watcher detached from `dir`. chokidar rescans a whole directory
   * (an lstat per file) on changes, at most once a second, for as long as changes keep coming:
   * 10,000 writes into a 10,000-file directory would cost minutes of rescans. Changes that other
   * writers made meanwhile are caught up afterwards from the directory listing and mtimes.
   */
  private async quiet<R>(dir: string, fn: () => Promise<R>): Promise<R> {
    const collection = this.collections.find((c) => c.dir === dir);
    if (!this.watcher || !collection) return fn();
    const since = Date.now();
    this.watcher.unwatch(dir);
    this.quietDirs.add(dir);
    try {
      return await fn();
    } finally {
      this.quietDirs.delete(dir);
      if (!this.closed) {
        this.watcher?.add(dir); // unset while reload() runs; the new watcher covers the dir
        await collection.catchUp(since - 1000); // mtime granularity and clock skew margin
        // chokidar attaches to the files one by one after add() and says nothing when done: an
        // edit made before it reached that file is only seen by a second look, as in touched()
        this.recheckLater(() => {
          if (!this.quietDirs.has(dir)) this.rescan(collection, () => collection.catchUp(since - 1000));
        });
      }
    }
  }

  /**
   * After a write of ours the file is read again twice: when the debounce window closes, and once
   * chokidar has surely re-attached to the replaced inode (it finds it by a directory rescan,
   * throttled to one a second). An edit made in between is then seen; unchanged bytes cost a hash.
   */
  private touched(file: string): void {
    if (this.closed || this.quietDirs.has(path.dirname(file))) return;
    this.schedule(file, 'normal');
    this.recheckLater(() => this.schedule(file, 'normal'));
  }

  /** Runs `look` once chokidar has surely (re-)attached, unless the store closed; dropped by reload and close. */
  private recheckLater(look: () => void): void {
    const timer = setTimeout(() => {
      this.recheckTimers.delete(timer);
      if (!this.closed) look();
    }, RECHECK_AFTER_WRITE_MS);
    this.recheckTimers.add(timer);
  }

  /** Re-reads a collection's dir in the background (settle() and close() wait for it); failures are logged. */
  private rescan(collection: FileCollection<unknown>, read: () => Promise<void>): void {
    this.track(
      read().catch((err) =>
        this.options.logger.error({ err, dir: collection.dir }, 'failed to rescan a data directory'),
      ),
    );
  }

  /** Keeps a promise in the in-flight set until it settles (settle() and close() wait for them). */
  private track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private async process(file: string, attempt: Attempt): Promise<void> {
    try {
      const owner = this.collections.find((c) => c.owns(file)) ?? this.documents.find((d) => d.owns(file));
      if (!owner) return;
      const outcome =
        owner instanceof FileCollection
          ? await owner.ingest(file, 'file', attempt)
          : await owner.ingest('file', attempt);
      if (outcome !== 'retry') return;
      // leading read of an invalid file: judge it when the window closes; syntax error: once more
      if (attempt === 'leading') this.markDirty(file);
      else this.schedule(file, 'final');
    } catch (err) {
      // never crash on a bad, unreadable or vanished file (API.md §3.3)
      this.options.logger.error({ err, file }, 'failed to process a data file change');
    }
  }
}

/** Opens the store: creates the data dir and starts watching it. */
export async function openStore(options: StoreOptions): Promise<YamlStore> {
  const store = new Store(options);
  await store.open();
  return store;
}
