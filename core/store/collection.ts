/** A directory of YAML files, one object per file, held in memory and kept in step with the disk. */
import { statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { StoreError } from './errors.ts';
import { fsyncDir, hashOf, removeDurably, writeAtomic, writeOrRemove } from './atomic-write.ts';
import type { Attempt, StoreContext } from './context.ts';
import { holds, readDataFile, signatureAfter } from './read-data-file.ts';
import { commitRestore } from './restore-commit.ts';
import type {
  ChangeEvent,
  ChangeSource,
  Collection,
  CollectionOptions,
  InvalidFile,
  StoredObject,
  WriteOptions,
} from './types.ts';
import { checkerFor, decodeFileBytes, invalidAt, notUtf8, parseFileText, validateAgainst } from './validate.ts';
import { renderYaml } from './yaml-file.ts';
import { SLUG } from '../ids.ts';
import { mapBounded } from '../concurrency.ts';

const YAML_FILE = /^([^.].*)\.ya?ml$/;
/** Files written at once by updateMany: enough to overlap fsyncs, few enough to keep memory flat. */
const BATCH_CONCURRENCY = 16;
/** Files the startup scan and the catch-up read between two turns of the event loop. */
const SCAN_SLICE = 32;
const idOf = (file: string): string => path.basename(file).replace(/\.ya?ml$/, '');
/** Batches at least this large are written with the watcher detached from the dir (Store.quiet). */
const QUIET_BATCH = 50;

type Held<T> = StoredObject<T> & { text: string };
type ReadResult<T> =
  | { kind: 'missing' }
  | { kind: 'ok'; object: Held<T> }
  | { kind: 'invalid'; error: InvalidFile; syntax: boolean; hash: string };

const versionConflict = (collection: string, id: string) =>
  new StoreError('version_conflict', `${collection}/${id} is not at the expected version`);

const isoOrNull = (v: unknown): string | null =>
  typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : null;

export class FileCollection<T> implements Collection<T> {
  readonly name: string;
  readonly dir: string;
  private readonly objects = new Map<string, Held<T>>();
  private readonly invalid = new Map<string, InvalidFile & { hash: string }>();
  private readonly listeners = new Set<(event: ChangeEvent<T>) => void>();
  private readonly idPattern: RegExp;
  private sorted: StoredObject<T>[] | null = null;
  /** Change events of a large updateMany, announced when it is done (null: announce at once). */
  private heldEvents: ChangeEvent<T>[] | null = null;
  /**
   * Files this process is writing (path → hash of the new bytes; '' for a removal). The watcher
   * may report a rename before the writer has updated memory: such events are our own, not edits.
   */
  private readonly ownWrites = new Map<string, string>();
  /** Writes started per file: a read that overlaps one may hold the bytes from before it. */
  private readonly writesStarted = new Map<string, number>();

  constructor(
    private readonly ctx: StoreContext,
    private readonly options: CollectionOptions<T>,
  ) {
    this.name = options.name;
    this.dir = path.join(ctx.dataDir, options.name);
    this.idPattern = options.idPattern ?? SLUG;
    checkerFor(options.schema);
  }

  list(): StoredObject<T>[] {
    this.sorted ??= [...this.objects.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.sorted;
  }

  get(id: string): StoredObject<T> | undefined {
    return this.objects.get(id);
  }

  has(id: string): boolean {
    return this.objects.has(id);
  }

  invalidFiles(): InvalidFile[] {
    return [...this.invalid.values()].map(({ hash: _hash, ...rest }) => rest);
  }

  onChange(listener: (event: ChangeEvent<T>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Loads every file at startup. */
  async scan(): Promise<void> {
    let names: string[] = [];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // files are read synchronously (read-data-file.ts), so the event loop gets a turn between
    // slices: health checks and the early provider answer go on during a 20,000-file scan
    const files = names.filter((name) => YAML_FILE.test(name)).sort();
    for (const [i, name] of files.entries()) {
      await this.ingest(path.join(this.dir, name), 'startup', 'final');
      if (i % SCAN_SLICE === SCAN_SLICE - 1) await nextTurn();
    }
  }

  /**
   * Brings memory in line with the directory listing. Run when the directory itself appears or
   * vanishes: the watcher may attach to a new directory after its first files came and went.
   */
  async resync(source: ChangeSource = 'file'): Promise<void> {
    await this.reconcileWithDisk(async () => true, source);
  }

  /**
   * After a bulk write with the watcher detached: takes in what changed on disk meanwhile (files
   * modified since `sinceMs`, new files, removed files). Our own writes come back unchanged and
   * cost a read and a hash each.
   */
  async catchUp(sinceMs: number): Promise<void> {
    // a synchronous stat, like the reads: about 2 µs from the cache against a thread-pool round trip
    await this.reconcileWithDisk(async (file) => {
      const stats = statSync(file, { throwIfNoEntry: false });
      return stats === undefined || stats.mtimeMs >= sinceMs;
    });
  }

  /** Drops objects whose file is gone, then ingests new files and those `changed` selects. */
  private async reconcileWithDisk(
    changed: (file: string) => Promise<boolean>,
    source: ChangeSource = 'file',
  ): Promise<void> {
    let names: string[] = [];
    try {
      names = (await readdir(this.dir)).filter((n) => YAML_FILE.test(n));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const files = new Set(names.map((n) => path.join(this.dir, n)));
    for (const object of [...this.objects.values()]) {
      if (!files.has(object.file)) await this.ingest(object.file, source, 'final');
    }
    const held = new Set([...this.objects.values()].map((o) => o.file));
    let done = 0;
    for (const file of files) {
      if (!held.has(file) || (await changed(file))) await this.ingest(file, source, 'final');
      if (++done % SCAN_SLICE === 0) await nextTurn();
    }
  }

  /**
   * A change from the cluster (cluster mode): written under the collection lock, marked as our own
   * write so the watcher does not take it for a hand edit, then taken in with source `cluster`.
   */
  async applyRemote(
    file: string,
    bytes: Buffer | null,
    stillNewer?: () => boolean,
    source: ChangeSource = 'cluster',
  ): Promise<void> {
    await this.ctx.locks.run(this.dir, async () => {
      if (stillNewer && !stillNewer()) return; // a writer of ours took a newer version in meanwhile
      if (source === 'restore') await commitRestore(this.ctx.replica, this.ctx.relative(file), bytes);
      if (!(await holds(file, bytes))) {
        this.ownOperation(file, bytes === null ? '' : hashOf(bytes));
        try {
          await writeOrRemove(file, bytes, { mode: this.options.fileMode });
        } finally {
          this.ownWrites.delete(file);
        }
      }
      await this.ingest(file, source, 'final');
    });
  }

  /** How a hand edit writing `bytes` to `file` would be judged: null when valid, else why not. */
  check(file: string, bytes: Buffer): InvalidFile | null {
    const result = this.judge(idOf(file), file, bytes, new Date());
    return result.kind === 'invalid' ? result.error : null;
  }

  /** Whether a path belongs to this collection (a YAML file directly inside its dir). */
  owns(file: string): boolean {
    return path.dirname(file) === this.dir && YAML_FILE.test(path.basename(file));
  }

  /**
   * Takes a file's current state into memory. Returns 'retry', without reporting anything, when
   * the file is invalid on a leading-edge read or has a syntax error on a normal read (editors that
   * write in two steps), so the watcher reads it once more.
   */
  async ingest(file: string, source: ChangeSource, attempt: Attempt): Promise<'done' | 'retry'> {
    const id = idOf(file);
    const started = this.writesStarted.get(file);
    const writing = this.ownWrites.has(file);
    const result = await this.readObject(id, file);
    // a read that overlapped our own write (or a removal) may hold the bytes from before it, which
    // would undo the write in memory: skip it, ctx.touched() looks at the file again after the write
    if (writing || this.ownWrites.has(file) || this.writesStarted.get(file) !== started) return 'done';
    const current = this.objects.get(id);
    if (result.kind === 'missing') {
      this.invalid.delete(file);
      if (current && current.file === file) {
        const twin = await this.readObject(id, this.twinOf(file));
        if (twin.kind === 'ok') this.set(twin.object, source, current);
        else this.remove(id, source);
      }
      return 'done';
    }
    if (result.kind === 'invalid') {
      if (attempt === 'leading' || (result.syntax && attempt === 'normal')) return 'retry';
      this.markInvalid(result.error, result.hash);
      return 'done';
    }
    // an empty file is most likely an in-place write caught between truncate and write: only the
    // last look takes it (an object whose fields are all optional must not be reset meanwhile)
    if (attempt !== 'final' && result.object.text.trim() === '') return 'retry';
    this.invalid.delete(file);
    if (current && current.file !== file) {
      this.markInvalid(
        {
          path: file,
          line: null,
          column: null,
          message: `duplicate of ${path.basename(current.file)}: id ${id} is already defined`,
        },
        result.object.etag,
      );
      return 'done';
    }
    if (current && current.etag === result.object.etag) return 'done'; // our own write, or a touch
    this.set(result.object, source, current);
    return 'done';
  }

  async create(id: string, data: T): Promise<StoredObject<T>> {
    return this.write(id, (current) => {
      if (current) throw new StoreError('already_exists', `${this.singular()} ${id} already exists`);
      return data;
    }) as Promise<StoredObject<T>>;
  }

  async put(id: string, data: T, options: WriteOptions = {}): Promise<StoredObject<T>> {
    return this.write(id, () => data, options) as Promise<StoredObject<T>>;
  }

  async update(
    id: string,
    mutate: (current: StoredObject<T> | undefined) => T | undefined,
    options: WriteOptions = {},
  ): Promise<StoredObject<T> | undefined> {
    return this.write(id, mutate, options);
  }

  async delete(id: string, options: WriteOptions = {}): Promise<boolean> {
    this.assertId(id);
    return this.ctx.locks.run(this.dir, () => this.deleteUnlocked(id, options));
  }

  /** delete() with the collection lock held. */
  private async deleteUnlocked(id: string, options: WriteOptions, syncDir = true): Promise<boolean> {
    {
      const fresh = await this.fresh(id);
      if (!fresh) return false;
      if (options.expect && !options.expect(fresh.etag)) throw versionConflict(this.name, id);
      this.ownOperation(fresh.file, '');
      try {
        if ((await this.ctx.replica?.commit(this.ctx.relative(fresh.file), null)) === 'stale') {
          // another node changed it meanwhile: take its version in and decide again on that one
          this.ownWrites.delete(fresh.file);
          await this.ingest(fresh.file, 'cluster', 'final');
          return await this.deleteUnlocked(id, options, syncDir);
        }
        await removeDurably(fresh.file, syncDir);
        this.invalid.delete(fresh.file);
        if (this.objects.has(id)) this.remove(id, options.source ?? 'api');
      } finally {
        this.ownWrites.delete(fresh.file);
        this.ctx.touched(fresh.file);
      }
      return true;
    }
  }

  /**
   * Several read-modify-writes under one lock acquisition, files written concurrently and the
   * directory fsynced once: a first discovery sync of 10,000 resources takes seconds, not minutes.
   * Ids must be distinct. Resolves in input order, like update() for each.
   */
  async updateMany(
    items: { id: string; mutate: (current: StoredObject<T> | undefined) => T | undefined }[],
    options: Pick<WriteOptions, 'source'> & { signal?: AbortSignal } = {},
  ): Promise<(StoredObject<T> | undefined)[]> {
    const ids = new Set(items.map((item) => item.id));
    if (ids.size !== items.length) throw new Error(`store: updateMany on ${this.name} got the same id twice`);
    for (const item of items) this.assertId(item.id);
    return this.ctx.locks.run(this.dir, () =>
      this.inBulk(items.length, async () => {
        let wrote = false;
        const results = await mapBounded(items, BATCH_CONCURRENCY, async (item) => {
          if (options.signal?.aborted) return this.objects.get(item.id);
          const outcome = await this.writeUnlocked(item.id, item.mutate, options, false);
          wrote ||= outcome.wrote;
          return outcome.object;
        });
        if (wrote) await fsyncDir(this.dir);
        return results;
      }),
    );
  }

  /**
   * Creates several new objects, all or nothing (an import): every id must be free and every
   * object valid before anything is written (already_exists / an Error otherwise); the files are
   * written concurrently, each fsynced, and the directory once. When a write fails, the files
   * already written are removed again before the error is thrown. Resolves in input order.
   */
  async createMany(
    items: { id: string; data: T }[],
    options: Pick<WriteOptions, 'source'> = {},
  ): Promise<StoredObject<T>[]> {
    this.assertDistinct(items.map((item) => item.id));
    const check = checkerFor(this.options.schema);
    return this.ctx.locks.run(this.dir, () =>
      this.inBulk(items.length, async () => {
        for (const item of items) {
          if (await this.fresh(item.id))
            throw new StoreError('already_exists', `${this.singular()} ${item.id} already exists`);
          if (!check.Check(item.data)) throw new Error(`store: refusing to write invalid ${this.name}/${item.id}`);
        }
        const written: string[] = [];
        try {
          const results = await mapBounded(items, BATCH_CONCURRENCY, async (item) => {
            const outcome = await this.writeUnlocked(
              item.id,
              (current) => {
                if (current) throw new StoreError('already_exists', `${this.singular()} ${item.id} already exists`);
                return item.data;
              },
              options,
              false,
            );
            written.push(item.id);
            return outcome.object!;
          });
          await fsyncDir(this.dir);
          return results;
        } catch (err) {
          await this.deleteManyUnlocked(written, options).catch((undo: unknown) =>
            this.ctx.logger.error({ err: undo, collection: this.name }, 'createMany could not remove what it wrote'),
          );
          throw err;
        }
      }),
    );
  }

  /** delete() for several distinct ids under one lock, removed concurrently, the directory fsynced once. */
  async deleteMany(ids: string[], options: Pick<WriteOptions, 'source'> = {}): Promise<boolean[]> {
    this.assertDistinct(ids);
    return this.ctx.locks.run(this.dir, () => this.inBulk(ids.length, () => this.deleteManyUnlocked(ids, options)));
  }

  private async deleteManyUnlocked(ids: string[], options: Pick<WriteOptions, 'source'>): Promise<boolean[]> {
    let removed = false;
    const results = await mapBounded(ids, BATCH_CONCURRENCY, async (id) => {
      const gone = await this.deleteUnlocked(id, options, false);
      removed ||= gone;
      return gone;
    });
    if (removed) await fsyncDir(this.dir);
    return results;
  }

  private assertDistinct(ids: string[]): void {
    if (new Set(ids).size !== ids.length) throw new Error(`store: a batch on ${this.name} got the same id twice`);
    for (const id of ids) this.assertId(id);
  }

  /**
   * Runs a batch write; a large one with the watcher detached from the dir (Store.quiet) and its
   * change events held until it is done: listeners (the provider config) hear of a first sync of
   * 10,000 resources once, not once a second while the files are written. Still one event per object.
   */
  private async inBulk<R>(count: number, work: () => Promise<R>): Promise<R> {
    if (count < QUIET_BATCH) return work();
    this.heldEvents = [];
    try {
      return await this.ctx.quiet(this.dir, work);
    } finally {
      const held = this.heldEvents;
      this.heldEvents = null;
      for (const event of held) this.emit(event);
    }
  }

  private async write(
    id: string,
    mutate: (current: StoredObject<T> | undefined) => T | undefined,
    options: WriteOptions = {},
  ): Promise<StoredObject<T> | undefined> {
    this.assertId(id);
    return this.ctx.locks.run(this.dir, async () => (await this.writeUnlocked(id, mutate, options, true)).object);
  }

  /** One read-modify-write; the caller holds the collection lock. */
  private async writeUnlocked(
    id: string,
    mutate: (current: StoredObject<T> | undefined) => T | undefined,
    options: WriteOptions,
    syncDir: boolean,
  ): Promise<{ object: StoredObject<T> | undefined; wrote: boolean }> {
    const fresh = await this.fresh(id);
    if (options.expect && !options.expect(fresh?.etag)) throw versionConflict(this.name, id);
    const data = mutate(fresh);
    if (data === undefined) return { object: fresh, wrote: false };
    const check = checkerFor(this.options.schema);
    if (!check.Check(data)) {
      const first = check.Errors(data).First();
      throw new Error(`store: refusing to write invalid ${this.name}/${id}: ${first?.path} ${first?.message}`);
    }
    const now = this.ctx.now();
    const content = { ...(data as object), created_at: fresh?.created_at ?? now, updated_at: now };
    const file = fresh?.file ?? path.join(this.dir, `${id}.yaml`);
    const text = renderYaml(content, fresh?.text);
    const object: Held<T> = {
      id,
      data,
      etag: hashOf(text),
      created_at: content.created_at,
      updated_at: now,
      file,
      text,
    };
    this.ownOperation(file, object.etag);
    try {
      if ((await this.ctx.replica?.commit(this.ctx.relative(file), text)) === 'stale') {
        // another node wrote a newer version: take it in, then mutate and check `expect` on it
        this.ownWrites.delete(file);
        await this.ingest(file, 'cluster', 'final');
        return await this.writeUnlocked(id, mutate, options, syncDir);
      }
      await writeAtomic(file, text, { mode: this.options.fileMode, syncDir });
      this.invalid.delete(file);
      this.set(object, options.source ?? 'api', this.objects.get(id));
    } finally {
      this.ownWrites.delete(file);
      this.ctx.touched(file);
    }
    return { object, wrote: true };
  }

  /** Marks a write (or, with '', a removal) of `file` by this process as started. */
  private ownOperation(file: string, etag: string): void {
    this.ownWrites.set(file, etag);
    this.writesStarted.set(file, (this.writesStarted.get(file) ?? 0) + 1);
  }

  /** The freshest version: re-read from disk (a hand edit may not be ingested yet), else memory. */
  private async fresh(id: string): Promise<Held<T> | undefined> {
    const held = this.objects.get(id);
    const file = held?.file ?? path.join(this.dir, `${id}.yaml`);
    let result = await this.readObject(id, file);
    if (result.kind === 'missing' && !held) result = await this.readObject(id, this.twinOf(file));
    if (result.kind === 'ok') return result.object;
    if (result.kind === 'invalid') return held ? { ...held, text: '' } : undefined; // last good wins; the write repairs the file
    return undefined;
  }

  private async readObject(id: string, file: string): Promise<ReadResult<T>> {
    const read = await readDataFile(file);
    this.ctx.read(file, signatureAfter(file, read));
    if (read.kind === 'missing') return read;
    if (read.kind === 'refused')
      return {
        kind: 'invalid',
        syntax: false,
        hash: '',
        error: { path: file, line: null, column: null, message: read.message },
      };
    return this.judge(id, file, read.bytes, read.mtime);
  }

  /** Parses and validates a file's text as a hand edit of `file` is judged. */
  private judge(id: string, file: string, bytes: Buffer, mtime: Date): ReadResult<T> {
    const { text, invalidAt: badByte } = decodeFileBytes(bytes);
    // the bytes we hold already (our own write coming back through the watcher, a touch):
    // no need to parse and validate them again
    const held = this.objects.get(id);
    if (badByte === null && held && held.file === file && held.etag === hashOf(text))
      return { kind: 'ok', object: held };
    const hash = hashOf(text);
    const invalid = (error: InvalidFile, syntax = false): ReadResult<T> => ({ kind: 'invalid', error, syntax, hash });
    if (!this.idPattern.test(id))
      return invalid({
        path: file,
        line: null,
        column: null,
        message: `file name ${path.basename(file)} is not a valid id (${this.idPattern.source})`,
      });
    const parsed = badByte ? notUtf8(file, badByte) : parseFileText(file, text);
    if (!parsed.ok) return invalid(parsed.error, parsed.syntax);
    const raw = parsed.value ?? {};
    if (typeof raw !== 'object' || Array.isArray(raw))
      return invalid({ path: file, line: 1, column: 1, message: 'file must hold a YAML mapping' });
    const { id: innerId, created_at, updated_at, ...rest } = raw as Record<string, unknown>;
    if (innerId !== undefined && innerId !== id)
      return invalid(
        invalidAt(file, parsed.parsed, '/id', `id "${String(innerId)}" does not match the file name ${id}`),
      );
    for (const [key, v] of [
      ['created_at', created_at],
      ['updated_at', updated_at],
    ] as const) {
      if (v !== undefined && isoOrNull(v) === null)
        return invalid(invalidAt(file, parsed.parsed, `/${key}`, `${key} must be an ISO-8601 timestamp`));
    }
    const valid = validateAgainst<T>(this.options.schema, rest, file, parsed.parsed);
    if (!valid.ok) return invalid(valid.error);
    const problems = this.options.check?.(id, valid.value) ?? [];
    if (problems.length > 0)
      return invalid(
        invalidAt(
          file,
          parsed.parsed,
          problems[0].path,
          `${problems[0].path.replace(/^\//, '')}: ${problems[0].message}`,
        ),
      );
    const data = this.options.normalize ? this.options.normalize(valid.value) : valid.value;
    const fallback = mtime.toISOString();
    return {
      kind: 'ok',
      object: {
        id,
        data,
        etag: hash,
        created_at: isoOrNull(created_at) ?? fallback,
        updated_at: isoOrNull(updated_at) ?? fallback,
        file,
        text,
      },
    };
  }

  private twinOf(file: string): string {
    return file.endsWith('.yaml') ? file.replace(/\.yaml$/, '.yml') : file.replace(/\.yml$/, '.yaml');
  }

  private markInvalid(error: InvalidFile, hash: string): void {
    const previous = this.invalid.get(error.path);
    this.invalid.set(error.path, { ...error, hash });
    if (previous?.hash !== hash) {
      this.ctx.logger.warn(
        { file: error.path, line: error.line, column: error.column },
        `invalid file ignored, last valid version stays in effect: ${error.message}`,
      );
      this.ctx.emitAny({ collection: this.name, source: 'file' });
    }
  }

  private set(object: Held<T>, source: ChangeSource, previous: Held<T> | undefined): void {
    this.objects.set(object.id, object);
    this.sorted = null;
    if (source === 'file') {
      this.ctx.logger.info(
        { collection: this.name, id: object.id, file: object.file },
        previous ? 'hand edit applied' : 'object added from file',
      );
    }
    // a hand edit or a restore on this node: the other nodes of a cluster take it too
    if (source === 'file' || source === 'restore')
      this.ctx.replica?.handEdit(this.ctx.relative(object.file), object.text);
    this.emit({ collection: this.name, type: 'upsert', id: object.id, object, previous, source });
  }

  private remove(id: string, source: ChangeSource): void {
    const previous = this.objects.get(id);
    this.objects.delete(id);
    this.sorted = null;
    if (source === 'file') {
      this.ctx.logger.info({ collection: this.name, id }, 'object deleted by removing its file');
    }
    if (previous && (source === 'file' || source === 'restore'))
      this.ctx.replica?.handEdit(this.ctx.relative(previous.file), null);
    this.emit({ collection: this.name, type: 'delete', id, previous, source });
  }

  private emit(event: ChangeEvent<T>): void {
    if (this.heldEvents) {
      this.heldEvents.push(event);
      return;
    }
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.ctx.logger.error({ err, collection: this.name }, 'change listener failed');
      }
    }
    const action = event.type === 'delete' ? 'deleted' : event.previous ? 'updated' : 'created';
    this.ctx.emitAny({ collection: this.name, id: event.id, source: event.source, action, etag: event.object?.etag });
  }

  private assertId(id: string): void {
    if (!this.idPattern.test(id))
      throw new StoreError('invalid_id', `id "${id.slice(0, 80)}" is not valid`, `must match ${this.idPattern.source}`);
  }

  private singular(): string {
    const last = this.name.split('/').pop() ?? this.name;
    return last.endsWith('s') ? last.slice(0, -1) : last;
  }
}
