/**
 * The resources collection plus the discovered fields Stack Manager trusts. The discovered part
 * lives in memory, seeded from the files at startup and refreshed by each writing sync; a node that
 * does not sync with writes (a cluster follower) refreshes it from every file the cluster
 * replicates, since those are the leader's sync writes. Hand edits are read for their overrides
 * only (API.md §3.3): a hand edit of `rule` or `host` changes nothing, and the node that syncs
 * fetches the upstream at once to write the true values back.
 *
 * The ETag a resource is answered with covers what is answered: the file's ETag while the trusted
 * discovered fields are the file's, a hash of the file's ETag and the trusted fields otherwise (a
 * hand edit not put back yet, a sync whose files are still being written). So one ETag never stands
 * for two answers, on one node or across a cluster.
 */
import { createHash } from 'node:crypto';
import { StoreError } from '../../core/store/errors.ts';
import type { ChangeEvent, ChangeSource, Collection, StoredObject } from '../../core/store/types.ts';
import { ifMatchAccepts } from '../../model/http.ts';
import { stringifyCanonical } from '../../model/lossless-json.ts';
import type { ResourceRecord } from '../../model/upstream-routers.ts';
import { resourceErrors } from './errors.ts';
import {
  compose,
  discoveredFromFile,
  discoveredOf,
  DISCOVERED_KEYS,
  overridesFromFile,
  sameDiscovered,
  toFile,
  type DiscoveredPart,
  type Overrides,
} from './record.ts';
import type { ResourceFileData } from './schemas.ts';

export interface RepositoryOptions {
  /**
   * Whether this node's syncs write (standalone: always; cluster: the leader). Such a node keeps its
   * own discovered fields against changes of other nodes; the others take them from the files.
   */
  leads?: () => boolean;
}

const versionConflict = (id: string) =>
  new StoreError('version_conflict', `resources/${id} is not at the expected version`);

export class ResourceRepository {
  private collection!: Collection<ResourceFileData>;
  private readonly leads: () => boolean;
  /** Answered ETags by stored version, with the discovered part they were computed for. */
  private readonly etags = new WeakMap<StoredObject<ResourceFileData>, { part: DiscoveredPart; etag: string }>();
  private readonly driftListeners = new Set<(id: string) => void>();
  private readonly discovered = new Map<string, DiscoveredPart>();
  private cache: ResourceRecord[] | null = null;
  /**
   * Records by id with what they were built from: an unchanged resource keeps its record object
   * across rebuilds of the list (the config generator's memo keys on that identity).
   */
  private built = new Map<
    string,
    { stored: StoredObject<ResourceFileData>; part: DiscoveredPart; record: ResourceRecord }
  >();
  private readonly listeners = new Set<() => void>();

  constructor(options: RepositoryOptions = {}) {
    this.leads = options.leads ?? (() => true);
  }

  /** Connects the store collection and seeds the discovered parts from the files. */
  attach(collection: Collection<ResourceFileData>): void {
    this.collection = collection;
    for (const stored of collection.list()) this.discovered.set(stored.id, discoveredFromFile(stored.id, stored.data));
    collection.onChange((event) => this.onStoreChange(event));
  }

  /** Subscribes to any change of any resource (sync, API, hand edit); returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Subscribes to hand edits (and, on the node that syncs, other nodes' files) whose discovered
   * fields differ from the trusted ones: on the node that syncs, the caller runs a sync to put the
   * upstream's values back. Returns the unsubscribe function.
   */
  onDrift(listener: (id: string) => void): () => void {
    this.driftListeners.add(listener);
    return () => this.driftListeners.delete(listener);
  }

  /** Every resource, sorted by id. The array is shared: callers must not modify it. */
  records(): ResourceRecord[] {
    if (!this.cache) {
      const built = new Map<
        string,
        { stored: StoredObject<ResourceFileData>; part: DiscoveredPart; record: ResourceRecord }
      >();
      this.cache = this.collection.list().map((stored) => {
        const part = this.discovered.get(stored.id) ?? discoveredFromFile(stored.id, stored.data);
        const previous = this.built.get(stored.id);
        const record =
          previous && previous.stored === stored && previous.part === part
            ? previous.record
            : compose(stored.id, part, overridesFromFile(stored.data));
        built.set(stored.id, { stored, part, record });
        return record;
      });
      this.built = built;
    }
    return this.cache;
  }

  record(id: string): ResourceRecord | undefined {
    const stored = this.collection.get(id);
    return stored ? this.recordOf(stored) : undefined;
  }

  /** The stored object (timestamps) of a resource. Its `etag` is the file's: the API answers etag(). */
  stored(id: string): StoredObject<ResourceFileData> | undefined {
    return this.collection.get(id);
  }

  /** The ETag of what record(id) answers (see the top of this file). */
  etag(id: string): string | undefined {
    const stored = this.collection.get(id);
    return stored && this.etagOf(stored, this.discovered.get(id));
  }

  /** Whether the file's discovered fields differ from the trusted ones (a hand edit to undo at the next sync). */
  drifted(id: string): boolean {
    const stored = this.collection.get(id);
    const trusted = this.discovered.get(id);
    return (
      stored !== undefined && trusted !== undefined && !sameDiscovered(discoveredFromFile(id, stored.data), trusted)
    );
  }

  /**
   * Changes the overrides of one resource under the collection lock. `change` receives the record
   * built from the freshest file (so a concurrent hand edit is not lost) and returns new overrides.
   */
  async updateOverrides(
    id: string,
    change: (record: ResourceRecord) => Overrides,
    ifMatch?: string,
  ): Promise<StoredObject<ResourceFileData>> {
    return this.rewrite(id, ifMatch, (record) => ({ ...record, ...change(record) }));
  }

  /** Creates an own resource's file (API.md §4.24); 409 already_exists when the id is taken. */
  async createLocal(record: ResourceRecord): Promise<StoredObject<ResourceFileData>> {
    const stored = await this.collection.create(record.id, toFile(record));
    this.discovered.set(record.id, discoveredFromFile(record.id, stored.data));
    this.changed();
    return stored;
  }

  /**
   * Replaces an own resource's whole file under the collection lock: `build` gets the record of the
   * freshest file and returns the new one (it throws to refuse, e.g. a discovered resource).
   */
  async replaceLocal(
    id: string,
    build: (record: ResourceRecord) => ResourceRecord,
    ifMatch?: string,
  ): Promise<StoredObject<ResourceFileData>> {
    const stored = await this.rewrite(id, ifMatch, build);
    this.discovered.set(id, discoveredFromFile(id, stored.data));
    this.changed();
    return stored;
  }

  /**
   * Rewrites one resource's file under the collection lock: `build` gets the record of the freshest
   * file (404 when it is gone, 412 when If-Match names another version) and returns the new one.
   */
  private async rewrite(
    id: string,
    ifMatch: string | undefined,
    build: (record: ResourceRecord) => ResourceRecord,
  ): Promise<StoredObject<ResourceFileData>> {
    if (!this.collection.has(id)) throw resourceErrors.notFound(id);
    const stored = await this.collection.update(id, (fresh) => {
      if (!fresh) throw ifMatch === undefined ? resourceErrors.notFound(id) : versionConflict(id);
      const part = this.discovered.get(id) ?? discoveredFromFile(id, fresh.data);
      // If-Match names what was answered, which the file's ETag alone does not always cover
      if (!ifMatchAccepts(ifMatch, this.etagOf(fresh, part))) throw versionConflict(id);
      return toFile(build(compose(id, part, overridesFromFile(fresh.data))));
    });
    return stored!;
  }

  /** Deletes the file after `guard` accepted the current record (it throws to refuse). */
  async delete(id: string, guard: (record: ResourceRecord) => void, ifMatch?: string): Promise<void> {
    const record = this.record(id);
    if (!record) throw resourceErrors.notFound(id);
    guard(record);
    const stored = this.collection.get(id);
    // the answered ETag of the version in memory; a file changed on disk and not read yet by its own
    const expect =
      ifMatch === undefined
        ? undefined
        : (etag: string | undefined) =>
            ifMatchAccepts(
              ifMatch,
              stored && etag === stored.etag ? this.etagOf(stored, this.discovered.get(id)) : etag,
            );
    if (!(await this.collection.delete(id, { expect }))) throw resourceErrors.notFound(id);
    this.discovered.delete(id);
    this.changed();
  }

  /**
   * Stores a sync's view of resources: the discovered part is trusted at once; a file is written
   * only when its discovered fields differ (a steady upstream writes nothing). A resource deleted
   * meanwhile is not brought back unless `isNew`. All files go in one batch (one lock, concurrent
   * writes). Returns, per entry, whether its file was written.
   */
  async writeDiscovered(
    entries: { record: ResourceRecord; isNew: boolean }[],
    options: { onStaged?: () => Promise<void>; signal?: AbortSignal } = {},
  ): Promise<boolean[]> {
    const todo = entries.filter(({ record, isNew }) => isNew || this.collection.has(record.id));
    for (const { record } of todo) {
      const part = discoveredOf(record);
      const known = this.discovered.get(record.id);
      // an unchanged part keeps its object, and with it the resource's record (see `built`)
      if (!known || !sameDiscovered(known, part)) this.discovered.set(record.id, part);
    }
    if (todo.length > 0) this.changed();
    // records() holds the new discovered parts from here on: the caller may publish what depends
    // on them (the upstream snapshot, hence the provider config) while the files are written
    await options.onStaged?.();
    if (todo.length === 0) return entries.map(() => false);
    const written = new Set<string>();
    await this.collection.updateMany(
      todo.map(({ record, isNew }) => ({
        id: record.id,
        mutate: (fresh: StoredObject<ResourceFileData> | undefined) => {
          if (!fresh) {
            if (!isNew) return undefined;
            written.add(record.id);
            return toFile(record);
          }
          const part = discoveredOf(record);
          if (sameDiscovered(discoveredFromFile(record.id, fresh.data), part)) return undefined;
          written.add(record.id);
          return toFile(compose(record.id, part, overridesFromFile(fresh.data)));
        },
      })),
      // at shutdown the remaining files keep their last discovered fields; the next sync writes them
      { source: 'discovery', signal: options.signal },
    );
    for (const { record } of todo) if (!this.collection.has(record.id)) this.discovered.delete(record.id);
    return entries.map(({ record }) => written.has(record.id));
  }

  private recordOf(stored: StoredObject<ResourceFileData>): ResourceRecord {
    const part = this.discovered.get(stored.id) ?? discoveredFromFile(stored.id, stored.data);
    return compose(stored.id, part, overridesFromFile(stored.data));
  }

  /** The file's ETag when `part` is what the file holds; else one over both (docs/API.md, Discovery). */
  private etagOf(stored: StoredObject<ResourceFileData>, part: DiscoveredPart | undefined): string {
    if (!part) return stored.etag;
    const cached = this.etags.get(stored);
    if (cached?.part === part) return cached.etag;
    const etag = sameDiscovered(discoveredFromFile(stored.id, stored.data), part)
      ? stored.etag
      : createHash('sha256')
          .update(`${stored.etag}\n${stringifyCanonical(DISCOVERED_KEYS.map((key) => part[key] ?? null))}`)
          .digest('hex')
          .slice(0, 32);
    this.etags.set(stored, { part, etag });
    return etag;
  }

  private onStoreChange(event: ChangeEvent<ResourceFileData>): void {
    if (event.type === 'delete') this.discovered.delete(event.id);
    else if (event.object) this.takeIn(event.id, event.object, event.source);
    this.changed();
  }

  /** What a new version of a file does to the trusted discovered part. */
  private takeIn(id: string, stored: StoredObject<ResourceFileData>, source: ChangeSource): void {
    const known = this.discovered.get(id);
    const fromFile = discoveredFromFile(id, stored.data);
    // an own resource's file is its definition, whoever wrote it (API.md §4.24): always taken
    if (fromFile.source === 'local' || known?.source === 'local') return void this.discovered.set(id, fromFile);
    // a file added by hand, from the cluster or by our own create brings its discovered part
    if (!known) return void this.discovered.set(id, fromFile);
    // our own writes (API: composed from the trusted part; a sync: trusted before it writes)
    if (source === 'api' || source === 'discovery' || source === 'startup') return;
    if (sameDiscovered(known, fromFile)) return;
    const leads = this.leads();
    // a follower's discovered fields are the leader's sync writes, which arrive from the cluster
    if (source === 'cluster' && !leads) return void this.discovered.set(id, fromFile);
    // a hand edit or a restore (here, or on another node when this one syncs): not taken, and the
    // node that syncs checks the upstream now, so the true values are back in every file at once
    if (leads) for (const listener of this.driftListeners) listener(id);
  }

  private changed(): void {
    this.cache = null;
    for (const listener of this.listeners) listener();
  }
}
