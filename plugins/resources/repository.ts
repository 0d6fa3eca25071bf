/**
 * The resources collection plus the discovered fields Stack Manager trusts. Files are read for
 * their overrides only (API.md §3.3): the discovered part lives in memory, seeded from the files at
 * startup and refreshed by each sync, so a hand edit of `rule` or `host` changes nothing until the
 * next sync writes the true values back.
 */
import type { ChangeEvent, Collection, StoredObject } from '../../core/store/types.ts';
import { matchingVersion } from '../../model/http.ts';
import type { ResourceRecord } from '../../model/upstream-routers.ts';
import { resourceErrors } from './errors.ts';
import {
  compose,
  discoveredFromFile,
  discoveredOf,
  overridesFromFile,
  sameDiscovered,
  toFile,
  type DiscoveredPart,
  type Overrides,
} from './record.ts';
import type { ResourceFileData } from './schemas.ts';

export class ResourceRepository {
  private collection!: Collection<ResourceFileData>;
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

  /** The stored object (ETag, timestamps) of a resource. */
  stored(id: string): StoredObject<ResourceFileData> | undefined {
    return this.collection.get(id);
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
    if (!this.collection.has(id)) throw resourceErrors.notFound(id);
    const stored = await this.collection.update(
      id,
      (fresh) => {
        if (!fresh) throw resourceErrors.notFound(id);
        const record = compose(
          id,
          this.discovered.get(id) ?? discoveredFromFile(id, fresh.data),
          overridesFromFile(fresh.data),
        );
        return toFile({ ...record, ...change(record) });
      },
      { expect: matchingVersion(ifMatch) },
    );
    return stored!;
  }

  /** Deletes the file after `guard` accepted the current record (it throws to refuse). */
  async delete(id: string, guard: (record: ResourceRecord) => void, ifMatch?: string): Promise<void> {
    const record = this.record(id);
    if (!record) throw resourceErrors.notFound(id);
    guard(record);
    if (!(await this.collection.delete(id, { expect: matchingVersion(ifMatch) }))) throw resourceErrors.notFound(id);
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

  private onStoreChange(event: ChangeEvent<ResourceFileData>): void {
    if (event.type === 'delete') this.discovered.delete(event.id);
    // a file added by hand (or our own create) brings its discovered part; known ids keep theirs
    else if (!this.discovered.has(event.id) && event.object)
      this.discovered.set(event.id, discoveredFromFile(event.id, event.object.data));
    this.changed();
  }

  private changed(): void {
    this.cache = null;
    for (const listener of this.listeners) listener();
  }
}
