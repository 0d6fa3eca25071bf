/** Public types of the YAML file store (API.md §3). */
import type { TSchema } from '@sinclair/typebox';
import type { ErrorDetail } from '../errors/app-error.ts';

/** One object as the store holds it: validated content plus metadata from its file. */
export interface StoredObject<T> {
  id: string;
  /** File content without `id`, `created_at`, `updated_at` (those are the fields below). */
  data: T;
  /** First 32 hex digits of the SHA-256 of the file bytes. */
  etag: string;
  created_at: string;
  updated_at: string;
  /** Absolute path of the file. */
  file: string;
}

/**
 * Who caused a change: a request through the API, a hand edit on disk, the initial scan, a
 * discovery sync writing what the upstream reported, a backup restore (store reload), or another
 * node of the cluster (a change replicated through etcd, cluster mode).
 */
export type ChangeSource = 'api' | 'file' | 'startup' | 'discovery' | 'restore' | 'cluster';

/** What onAnyChange reports. `action`/`etag` only for objects of collections; `id` absent for a document or an invalid file. */
export interface AnyChangeEvent {
  collection: string;
  id?: string;
  source: ChangeSource;
  action?: 'created' | 'updated' | 'deleted';
  /** ETag of the new version (absent on delete). */
  etag?: string;
}

export interface ChangeEvent<T = unknown> {
  collection: string;
  type: 'upsert' | 'delete';
  id: string;
  object?: StoredObject<T>;
  previous?: StoredObject<T>;
  source: ChangeSource;
}

/** A hand-edited file that failed parsing or validation; its last valid version stays in effect. */
export interface InvalidFile {
  path: string;
  line: number | null;
  column: number | null;
  message: string;
}

export interface WriteOptions {
  /**
   * Accepts the object's current version (its etag; undefined when there is none) or the write
   * fails with StoreError `version_conflict` and writes nothing. Routes build it from If-Match
   * (model/http.ts matchingVersion), and the error handler answers 412.
   */
  expect?: (etag: string | undefined) => boolean;
  /** Who writes: `api` (default) or `discovery` (reported in change events). */
  source?: ChangeSource;
}

export interface CollectionOptions<T> {
  /** Directory under the data dir, e.g. `middlewares` or `ext/hello`. Also the collection's name. */
  name: string;
  /** Schema of the file content (without id/created_at/updated_at). */
  schema: TSchema;
  /** Extra checks run on hand edits (references); errors make the file invalid. */
  check?: (id: string, data: T) => ErrorDetail[];
  /** Fills defaults after validation (files may omit optional fields). */
  normalize?: (data: T) => T;
  /** File mode for new files (0644 unless a secret). */
  fileMode?: number;
  /** Pattern of valid ids (file names); others are reported invalid. Default: the slug pattern of API.md §2.8. */
  idPattern?: RegExp;
}

/** One collection: a directory with one YAML file per object. */
export interface Collection<T> {
  readonly name: string;
  readonly dir: string;
  /** All valid objects, sorted by id (code-unit order). */
  list(): StoredObject<T>[];
  get(id: string): StoredObject<T> | undefined;
  has(id: string): boolean;
  /** Creates a new object; 409 already_exists if the id is taken. */
  create(id: string, data: T): Promise<StoredObject<T>>;
  /** Creates or fully replaces (created_at kept; comments and key order of kept fields preserved). */
  put(id: string, data: T, options?: WriteOptions): Promise<StoredObject<T>>;
  /**
   * Atomic read-modify-write under the collection lock: `mutate` gets the freshest version (re-read
   * from disk) and returns the new data, or `undefined` to leave the object unchanged.
   */
  update(
    id: string,
    mutate: (current: StoredObject<T> | undefined) => T | undefined,
    options?: WriteOptions,
  ): Promise<StoredObject<T> | undefined>;
  /**
   * update() for several distinct ids under one lock, written concurrently (bulk sync writes).
   * Once `signal` aborts (shutdown) no further item is written: those resolve with what is held.
   */
  updateMany(
    items: { id: string; mutate: (current: StoredObject<T> | undefined) => T | undefined }[],
    options?: Pick<WriteOptions, 'source'> & { signal?: AbortSignal },
  ): Promise<(StoredObject<T> | undefined)[]>;
  /**
   * Creates several new objects, all or nothing: nothing is written unless every id is free and
   * every object valid; each file is fsynced, the dir once; a failed write removes those written.
   */
  createMany(items: { id: string; data: T }[], options?: Pick<WriteOptions, 'source'>): Promise<StoredObject<T>[]>;
  /** Deletes the object; false when it did not exist. */
  delete(id: string, options?: WriteOptions): Promise<boolean>;
  /** delete() for several distinct ids under one lock, the dir fsynced once; false for each that did not exist. */
  deleteMany(ids: string[], options?: Pick<WriteOptions, 'source'>): Promise<boolean[]>;
  /** Invalid files of this collection (hand edits). */
  invalidFiles(): InvalidFile[];
  /** Subscribes to changes; returns the unsubscribe function. */
  onChange(listener: (event: ChangeEvent<T>) => void): () => void;
}

export interface DocumentOptions<T> {
  /** Path relative to the data dir, e.g. `datasources.yaml` or `auth/tokens.yaml`. */
  path: string;
  schema: TSchema;
  /** Content when the file does not exist (not written until the first update). */
  initial: () => T;
  /** Extra checks run on hand edits (references, key patterns); errors make the file invalid. */
  check?: (value: T) => ErrorDetail[];
  normalize?: (data: T) => T;
  fileMode?: number;
  /** Mode enforced on the file's directory (0700 for `auth/`, API.md §3.4); default 0755 for new dirs. */
  dirMode?: number;
}

/** A single YAML file holding one value (settings.yaml, datasources.yaml, auth/tokens.yaml). */
export interface StoreDocument<T> {
  readonly path: string;
  get(): T;
  exists(): boolean;
  /** Hash of the current bytes (same rule as object ETags). */
  etag(): string;
  update(mutate: (current: T) => T | undefined): Promise<T>;
  invalidFiles(): InvalidFile[];
  onChange(listener: (value: T, source: ChangeSource) => void): () => void;
}

/**
 * The replication log a store commits to in cluster mode (core/cluster/replication.ts: etcd). The
 * store stays the only code that writes data files; the replica decides whether a write may happen
 * and hands the cluster's changes back through YamlStore.applyRemote. Paths are relative to the
 * data dir, with `/` separators.
 */
export interface StoreReplica {
  /**
   * Commits the new bytes of a data file (null: its removal) before they reach the disk. `ok`: go
   * on. `stale`: the cluster holds a newer version than this node did; it has been written to disk
   * (the caller takes it in and tries again on it). Throws StoreError `replica_unavailable` when
   * the cluster cannot be reached: nothing was written.
   */
  commit(relativePath: string, bytes: string | Buffer | null): Promise<'ok' | 'stale'>;
  /** A change made on disk by hand (null: a removal), valid and applied locally: pushed in the background. */
  handEdit(relativePath: string, bytes: string | null): void;
  /** Hand edits that lost against a concurrent change from the cluster, reported with the invalid files. */
  conflicts(): InvalidFile[];
}

export interface YamlStore {
  readonly dataDir: string;
  /** Starts the watcher of a store opened with `watch: 'later'` and catches up; otherwise nothing. */
  startWatching(): Promise<void>;
  collection<T>(options: CollectionOptions<T>): Promise<Collection<T>>;
  document<T>(options: DocumentOptions<T>): Promise<StoreDocument<T>>;
  /** Every invalid file across collections and documents. */
  invalidFiles(): InvalidFile[];
  /** Any change in any collection or document (used to trigger regeneration). */
  onAnyChange(listener: (event: AnyChangeEvent) => void): () => void;
  /** Writes a file the store does not otherwise manage (cache, initial token), atomically. */
  writeRaw(relativePath: string, content: string | Buffer, mode?: number, dirMode?: number): Promise<void>;
  readRaw(relativePath: string): Promise<Buffer | undefined>;
  /** Resolves once pending debounced file events are processed (tests, shutdown). */
  settle(): Promise<void>;
  /**
   * Re-reads the whole data dir after it was replaced underneath the store (a backup restore swaps
   * its top-level items by rename). `replace`, if given, runs with the watcher stopped, so none of
   * its intermediate states is applied. Then the watcher restarts and every collection and document
   * is brought in line with the disk, emitting the usual change events (source `restore`), also when
   * `replace` throws (its error is rethrown).
   */
  reload(replace?: () => Promise<void>): Promise<void>;
  /**
   * Applies a change that came from the cluster (cluster mode): writes the bytes (null: removes the
   * file) under the owner's lock and takes them in with source `cluster`; a file no collection or
   * document owns is written as it is. `stillNewer` is asked under the lock: false (this node has
   * meanwhile taken a newer version from the cluster) leaves the file alone.
   */
  applyRemote(
    relativePath: string,
    bytes: Buffer | null,
    stillNewer?: () => boolean,
    /** Who the change is reported as (default `cluster`; a history restore writes with `restore`). */
    source?: ChangeSource,
  ): Promise<void>;
  /**
   * How a hand edit writing `bytes` to a data file would be judged (parse, schema, reference
   * checks), without writing anything: null when valid, when `bytes` is null (a removal) or when no
   * collection or document owns the path.
   */
  checkRaw(relativePath: string, bytes: Buffer | null): InvalidFile | null;
  close(): Promise<void>;
}
