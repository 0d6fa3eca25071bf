/**
 * The data dir replicated through etcd (issue 14). etcd is the replication log: each data file is
 * one key, `<prefix>data/<path relative to the data dir>` → the file's bytes. The files stay the
 * GitOps interface and every node serves from its own copy:
 *
 * - an API write is a txn comparing the key's `mod_revision` with the revision this node last saw
 *   (commit): two nodes writing the same object cannot both win, and the loser re-reads the
 *   winner's version and decides again (If-Match → 412, create → 409), as on one node;
 * - each node watches the prefix and writes what other nodes committed into its own files
 *   (through the store, source `cluster`);
 * - a valid hand edit on any node is pushed as the same txn; when it lost against a concurrent
 *   change it is logged and listed with the invalid files, and the cluster's version is written;
 * - etcd unreachable: commits throw (the API answers 502 upstream_unavailable), hand edits wait
 *   and are pushed when etcd returns; the watch resumes from its revision, or reads the whole
 *   range when that revision was compacted;
 * - the first node of an empty prefix imports its data dir; a node joining a non-empty prefix
 *   copies its differing local files into `.cluster-backup/<time>/` and takes the cluster's.
 */
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { IKeyValue, Namespace, Watcher } from 'etcd3';
import type { Logger } from 'pino';
import { hashOf, removeDurably, writeRawReplica } from '../store/atomic-write.ts';
import { StoreError } from '../store/errors.ts';
import { mapBounded } from '../concurrency.ts';
import { holds, MAX_DATA_FILE_BYTES, readDataFile } from '../store/read-data-file.ts';
import type { InvalidFile, StoreReplica, YamlStore } from '../store/types.ts';

export interface ReplicatorOptions {
  /** The cluster's namespace (under `cluster.prefix`); data keys live below `data/`. */
  etcd: Namespace;
  dataDir: string;
  nodeName: string;
  logger: Logger;
  /** What a 502 names: the etcd endpoints. */
  endpoints: string[];
  /** How long a joining node waits for another node's import of an empty cluster (ms). */
  importWaitMs?: number;
}

/** What this node last saw of a key: its `mod_revision`, the hash of its bytes, whether it exists. */
interface Known {
  rev: number;
  hash: string;
  present: boolean;
}

const IMPORT_KEY = 'import';
const IMPORT_CONCURRENCY = 16;

/** Whether a data file is replicated: not hidden (caches, locks, temp files), not the audit log. */
function replicated(relative: string): boolean {
  const parts = relative.split('/');
  return (
    !parts.some((part) => part.startsWith('.') || part.endsWith('.tmp') || part.endsWith('.lock')) &&
    !(parts.length === 1 && parts[0].startsWith('audit.log'))
  );
}

/** Every replicated regular file under the data dir (relative, `/`-separated), sorted. */
async function localFiles(dataDir: string, under = ''): Promise<string[]> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(path.join(dataDir, under), { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries) {
    const relative = under ? `${under}/${entry.name}` : entry.name;
    if (!replicated(relative)) continue;
    if (entry.isDirectory()) out.push(...(await localFiles(dataDir, relative)));
    else if (entry.isFile()) out.push(relative);
  }
  return out.sort();
}

const keyOf = (kv: IKeyValue) => kv.key.toString('utf8');

/** Waits for `work` (its failure ignored), at most `ms`. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

export class Replicator implements StoreReplica {
  readonly #root: Namespace;
  readonly #data: Namespace;
  readonly #options: ReplicatorOptions;
  readonly #log: Logger;
  readonly #known = new Map<string, Known>();
  /** Work per path runs one after another (remote changes, hand-edit pushes). */
  readonly #chains = new Map<string, Promise<void>>();
  /** Hand edits made while etcd was unreachable, pushed when it returns (with the version they replaced). */
  readonly #pending = new Map<string, { bytes: string | null; base: Known | undefined }>();
  readonly #conflicts = new Map<string, InvalidFile>();
  #revision = 0;
  #store: Pick<YamlStore, 'applyRemote'> | null = null;
  #watcher: Watcher | null = null;
  #prepared: Promise<void> | null = null;
  #reachable = true;
  #closed = false;

  constructor(options: ReplicatorOptions) {
    this.#options = options;
    this.#root = options.etcd;
    this.#data = options.etcd.namespace('data/');
    this.#log = options.logger;
  }

  /** The last etcd revision this node has applied. */
  get revision(): number {
    return this.#revision;
  }

  /** Brings the local data dir in line with the cluster, once (import into an empty one, or join). */
  prepare(): Promise<void> {
    this.#prepared ??= this.#prepare();
    return this.#prepared;
  }

  /** Starts writing the cluster's changes through `store`; returns the function that detaches it. */
  attach(store: Pick<YamlStore, 'applyRemote'>): () => void {
    this.#store = store;
    if (!this.#watcher && !this.#closed) this.#startWatch().catch((err) => this.#watchFailed(err as Error));
    return () => {
      if (this.#store === store) this.#store = null;
    };
  }

  async commit(relative: string, bytes: string | Buffer | null): Promise<'ok' | 'stale'> {
    let result;
    try {
      result = await this.#commitOver(relative, bytes, this.#known.get(relative));
    } catch (err) {
      throw this.#unavailable(err as Error);
    }
    const rev = Number(result.header.revision);
    if (result.succeeded) {
      this.#see(relative, rev, bytes);
      this.#conflicts.delete(relative);
      return 'ok';
    }
    const current = await this.#get(relative);
    // the caller holds the file's lock in the store and takes the file in itself: written directly
    this.#see(relative, current ? Number(current.mod_revision) : rev, current?.value ?? null);
    await this.#writeFile(relative, current?.value ?? null);
    this.#log.info(
      { file: relative, revision: current ? Number(current.mod_revision) : rev },
      'cluster: another node wrote this file first; deciding again on its version',
    );
    return 'stale';
  }

  handEdit(relative: string, bytes: string | null): void {
    if (!replicated(relative)) return;
    // the edit replaced the version this node knows now: a newer one arriving before the push wins
    const base = this.#known.get(relative);
    this.#enqueue(relative, () => this.#push(relative, bytes, base));
  }

  conflicts(): InvalidFile[] {
    return [...this.#conflicts.values()];
  }

  async close(): Promise<void> {
    this.#closed = true;
    const watcher = this.#watcher;
    this.#watcher = null;
    // etcd3's cancel waits for etcd's answer, which a stream in reconnect never gives: bounded
    await bounded(watcher?.cancel() ?? Promise.resolve(), 2_000);
    await bounded(Promise.all([...this.#chains.values()]), 5_000);
  }

  /** Until etcd answers: a node started while etcd is down serves its snapshot meanwhile (server.ts). */
  async #prepare(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#prepareOnce();
      } catch (err) {
        if (this.#closed) throw err;
        this.#log.warn(
          { err: { message: (err as Error).message }, attempt },
          'cluster: cannot join yet; trying again in 2 s',
        );
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }

  async #prepareOnce(): Promise<void> {
    let claimed: boolean;
    try {
      const claim = await this.#root
        .if(IMPORT_KEY, 'Create', '==', 0)
        .then(this.#root.put(IMPORT_KEY).value(JSON.stringify({ node: this.#options.nodeName, state: 'importing' })))
        .commit();
      claimed = claim.succeeded;
    } catch (err) {
      throw new Error(
        `cluster: cannot reach etcd (${this.#options.endpoints.join(', ')}) to join: ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (claimed) {
      await this.#import();
      await this.#root.put(IMPORT_KEY).value(JSON.stringify({ node: this.#options.nodeName, state: 'done' }));
    } else await this.#waitForImport();
    await this.#join();
  }

  /** First node of an empty cluster: every replicated local file becomes a key (unless one exists). */
  async #import(): Promise<void> {
    const files = await localFiles(this.#options.dataDir);
    let imported = 0;
    await mapBounded(files, IMPORT_CONCURRENCY, async (relative) => {
      const read = await readDataFile(path.join(this.#options.dataDir, relative), MAX_DATA_FILE_BYTES);
      if (read.kind !== 'ok') return;
      const result = await this.#data
        .if(relative, 'Create', '==', 0)
        .then(this.#data.put(relative).value(read.bytes))
        .commit();
      if (result.succeeded) imported++;
    });
    this.#log.info(
      { files: imported, node: this.#options.nodeName },
      'cluster: imported this data dir into an empty cluster',
    );
  }

  async #waitForImport(): Promise<void> {
    const deadline = Date.now() + (this.#options.importWaitMs ?? 120_000);
    for (;;) {
      const raw = await this.#root.get(IMPORT_KEY).string();
      const state = raw ? (JSON.parse(raw) as { node?: string; state?: string }) : null;
      if (!state || state.state === 'done') return;
      if (Date.now() > deadline) {
        this.#log.error(
          { importer: state.node },
          'cluster: the import of another node did not finish; joining with what etcd has',
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Takes the cluster's files: differing or extra local files are copied aside first. */
  async #join(): Promise<void> {
    const { dataDir } = this.#options;
    const response = await this.#data.getAll().exec();
    const remote = new Map(response.kvs.map((kv) => [keyOf(kv), kv]));
    const differing: string[] = [];
    /** Local files that hold the cluster's bytes already. */
    const same = new Set<string>();
    for (const relative of await localFiles(dataDir)) {
      const kv = remote.get(relative);
      if (kv && (await holds(path.join(dataDir, relative), kv.value))) same.add(relative);
      else differing.push(relative);
    }
    if (differing.length > 0) {
      const backup = path.join(dataDir, '.cluster-backup', new Date().toISOString().replace(/[:.]/g, '-'));
      for (const relative of differing) {
        await mkdir(path.dirname(path.join(backup, relative)), { recursive: true });
        await copyFile(path.join(dataDir, relative), path.join(backup, relative)).catch(() => undefined);
      }
      this.#log.warn(
        { files: differing.length, backup },
        "cluster: this node's data dir differed from the cluster; local files copied aside, the cluster's taken",
      );
    }
    let written = 0;
    for (const [relative, kv] of remote) {
      if (!same.has(relative)) {
        await this.#writeLocal(relative, kv.value);
        written++;
      }
      this.#see(relative, Number(kv.mod_revision), kv.value);
    }
    for (const relative of differing) if (!remote.has(relative)) await removeDurably(path.join(dataDir, relative));
    this.#revision = Number(response.header.revision);
    this.#log.info(
      {
        node: this.#options.nodeName,
        keys: remote.size,
        written,
        removed: differing.filter((r) => !remote.has(r)).length,
        revision: this.#revision,
      },
      'cluster: data dir in step with etcd',
    );
  }

  async #startWatch(): Promise<void> {
    const watcher = await this.#data
      .watch()
      .prefix('')
      .startRevision(String(this.#revision + 1))
      .create();
    if (this.#closed) {
      await watcher.cancel();
      return;
    }
    this.#watcher = watcher;
    watcher.on('put', (kv) => this.#remote(keyOf(kv), kv.value, Number(kv.mod_revision)));
    watcher.on('delete', (kv) => this.#remote(keyOf(kv), null, Number(kv.mod_revision)));
    watcher.on('data', (response) => {
      this.#revision = Math.max(this.#revision, Number(response.header?.revision ?? 0));
    });
    watcher.on('disconnected', (err) => {
      if (!this.#reachable) return;
      this.#reachable = false;
      this.#log.warn(
        { err: { message: err.message } },
        'cluster: etcd unreachable; serving the last configuration, writes answer 502 until it returns',
      );
    });
    watcher.on('connected', () => {
      if (this.#reachable) return;
      this.#reachable = true;
      this.#log.info(
        { revision: this.#revision, pending_hand_edits: this.#pending.size },
        'cluster: etcd reachable again; catching up',
      );
      for (const [relative, { bytes, base }] of this.#pending)
        this.#enqueue(relative, () => this.#push(relative, bytes, base));
    });
    watcher.on('error', (err) => this.#watchFailed(err));
  }

  /** The watch was cancelled (its revision compacted away, typically): read the whole range again. */
  #watchFailed(err: Error): void {
    if (this.#closed) return;
    this.#log.warn(
      { err: { message: err.message }, revision: this.#revision },
      'cluster: watch lost; reading the whole range again',
    );
    const old = this.#watcher;
    this.#watcher = null;
    void old?.cancel().catch(() => undefined);
    const retry = async (): Promise<void> => {
      while (!this.#closed) {
        try {
          await this.#resync();
          await this.#startWatch();
          return;
        } catch (error) {
          this.#log.warn({ err: { message: (error as Error).message } }, 'cluster: catch-up failed; trying again');
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    };
    void retry();
  }

  async #resync(): Promise<void> {
    const response = await this.#data.getAll().exec();
    const seen = new Set<string>();
    for (const kv of response.kvs) {
      seen.add(keyOf(kv));
      this.#remote(keyOf(kv), kv.value, Number(kv.mod_revision));
    }
    for (const [relative, known] of this.#known)
      if (known.present && !seen.has(relative)) this.#remote(relative, null, Number(response.header.revision));
    await Promise.all([...this.#chains.values()]);
    this.#revision = Number(response.header.revision);
  }

  /** A change another node committed (or our own coming back: skipped by its revision). */
  #remote(relative: string, bytes: Buffer | null, rev: number): void {
    this.#enqueue(relative, async () => {
      const known = this.#known.get(relative);
      if (known && known.rev >= rev) return;
      const file = path.join(this.#options.dataDir, relative);
      const local = await readDataFile(file, Number.MAX_SAFE_INTEGER);
      const localHash = local.kind === 'ok' ? hashOf(local.bytes) : '';
      const incoming = bytes === null ? '' : hashOf(bytes);
      const knownHash = known?.present ? known.hash : '';
      // the local file holds a hand edit the cluster has not taken (yet): the cluster's version wins
      if (localHash !== knownHash && localHash !== incoming) {
        this.#pending.delete(relative);
        this.#conflict(relative, rev);
      }
      // the file first, then the revision: a commit of this node compares against `known`, and
      // must not be based on a file that does not hold that revision yet (a lost update otherwise)
      await this.#writeLocal(relative, bytes, () => (this.#known.get(relative)?.rev ?? 0) < rev);
      this.#see(relative, rev, bytes);
    });
  }

  async #push(relative: string, bytes: string | null, base: Known | undefined): Promise<void> {
    const known = this.#known.get(relative);
    const hash = bytes === null ? '' : hashOf(bytes);
    if (known ? (known.present ? known.hash === hash : bytes === null) : bytes === null) {
      this.#pending.delete(relative);
      return; // the cluster has these bytes already (a change of ours or of the cluster coming back)
    }
    let result;
    try {
      result = await this.#commitOver(relative, bytes, base);
    } catch (err) {
      this.#pending.set(relative, { bytes, base });
      this.#log.warn(
        { file: relative, err: { message: (err as Error).message } },
        'cluster: etcd unreachable; the hand edit applies here and is pushed when etcd returns',
      );
      return;
    }
    this.#pending.delete(relative);
    if (result.succeeded) {
      this.#see(relative, Number(result.header.revision), bytes);
      this.#conflicts.delete(relative);
      this.#log.info(
        { file: relative, revision: Number(result.header.revision) },
        'cluster: hand edit pushed to the other nodes',
      );
      return;
    }
    const current = await this.#get(relative);
    const rev = current ? Number(current.mod_revision) : Number(result.header.revision);
    this.#conflict(relative, rev);
    await this.#writeLocal(relative, current?.value ?? null);
    this.#see(relative, rev, current?.value ?? null);
  }

  /** The txn of a write: puts `bytes` (null: deletes the key) only if the key is still at `base`. */
  #commitOver(relative: string, bytes: string | Buffer | null, base: Known | undefined) {
    return this.#data
      .if(relative, 'Mod', '==', base?.present ? base.rev : 0)
      .then(bytes === null ? this.#data.delete().key(relative) : this.#data.put(relative).value(bytes))
      .commit();
  }

  #conflict(relative: string, rev: number): void {
    const message = `hand edit lost: another node changed ${relative} first (etcd revision ${rev}); the cluster's version is in effect`;
    this.#conflicts.set(relative, {
      path: path.join(this.#options.dataDir, relative),
      line: null,
      column: null,
      message,
    });
    this.#log.warn({ file: relative, revision: rev }, `cluster: ${message}`);
  }

  async #get(relative: string): Promise<IKeyValue | undefined> {
    try {
      return (await this.#data.get(relative).exec()).kvs[0];
    } catch (err) {
      throw this.#unavailable(err as Error);
    }
  }

  /** Writes the cluster's bytes into this node's files: through the store when one is attached. */
  async #writeLocal(relative: string, bytes: Buffer | null, stillNewer?: () => boolean): Promise<void> {
    if (this.#store) return this.#store.applyRemote(relative, bytes, stillNewer);
    return this.#writeFile(relative, bytes);
  }

  /** Writes the bytes (null: removes the file) without the store, as the store writes files it does not own. */
  async #writeFile(relative: string, bytes: Buffer | null): Promise<void> {
    await writeRawReplica(this.#options.dataDir, relative, bytes);
  }

  /** Records what this node now holds of a key; never goes back to an older revision. */
  #see(relative: string, rev: number, bytes: string | Buffer | null): void {
    if ((this.#known.get(relative)?.rev ?? 0) > rev) return;
    this.#known.set(relative, { rev, hash: bytes === null ? '' : hashOf(bytes), present: bytes !== null });
  }

  #enqueue(relative: string, work: () => Promise<void>): void {
    const previous = this.#chains.get(relative) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((err) => this.#log.error({ err, file: relative }, 'cluster: applying a change failed'));
    this.#chains.set(relative, next);
    void next.finally(() => {
      if (this.#chains.get(relative) === next) this.#chains.delete(relative);
    });
  }

  #unavailable(err: Error): StoreError {
    return new StoreError(
      'replica_unavailable',
      `etcd did not confirm the write (${this.#options.endpoints.join(', ')}: ${err.message}); nothing was written ` +
        'on this node (if etcd took it after all, it arrives here like any change of the cluster)',
    );
  }
}
