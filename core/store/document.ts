/** A single YAML file holding one value (settings.yaml, datasources.yaml, auth/tokens.yaml). */
import path from 'node:path';
import { hashOf, writeAtomic, writeOrRemove } from './atomic-write.ts';
import type { StoreContext } from './context.ts';
import type { Attempt } from './context.ts';
import { holds, readDataFile, signatureAfter } from './read-data-file.ts';
import { commitRestore } from './restore-commit.ts';
import type { ChangeSource, DocumentOptions, InvalidFile, StoreDocument } from './types.ts';
import { checkerFor, decodeFileBytes, invalidAt, notUtf8, parseFileText, validateAgainst } from './validate.ts';
import { renderYaml } from './yaml-file.ts';

type Read<T> =
  | { kind: 'missing' }
  | { kind: 'ok'; value: T; text: string; hash: string }
  | { kind: 'invalid'; error: InvalidFile; syntax: boolean; hash: string };

export class FileDocument<T> implements StoreDocument<T> {
  readonly path: string;
  private value: T;
  private text: string | undefined;
  private hash = '';
  private invalid: (InvalidFile & { hash: string }) | null = null;
  /** Hash of the bytes update() is writing right now (see FileCollection.ownWrites). */
  private writing: string | null = null;
  /** Writes started: a read that overlaps one may hold the bytes from before it. */
  private writesStarted = 0;
  private readonly listeners = new Set<(value: T, source: ChangeSource) => void>();

  constructor(
    private readonly ctx: StoreContext,
    private readonly options: DocumentOptions<T>,
  ) {
    this.path = path.join(ctx.dataDir, options.path);
    this.value = options.initial();
    checkerFor(options.schema);
  }

  get(): T {
    return this.value;
  }

  exists(): boolean {
    return this.text !== undefined;
  }

  etag(): string {
    return this.hash;
  }

  invalidFiles(): InvalidFile[] {
    if (!this.invalid) return [];
    const { hash: _hash, ...rest } = this.invalid;
    return [rest];
  }

  onChange(listener: (value: T, source: ChangeSource) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  owns(file: string): boolean {
    return file === this.path;
  }

  /** Takes the file's current state; 'retry' as FileCollection.ingest explains. */
  async ingest(source: ChangeSource, attempt: Attempt): Promise<'done' | 'retry'> {
    const started = this.writesStarted;
    const writing = this.writing !== null;
    const result = await this.read();
    // a read that overlapped our own write may hold the bytes from before it, which would undo the
    // write in memory: skip it, ctx.touched() looks at the file again after the write
    if (writing || this.writing !== null || this.writesStarted !== started) return 'done';
    if (result.kind === 'missing') {
      this.invalid = null;
      if (this.text !== undefined) {
        this.text = undefined;
        this.hash = '';
        this.apply(this.options.initial(), source);
      }
      return 'done';
    }
    if (result.kind === 'invalid') {
      if (attempt === 'leading' || (result.syntax && attempt === 'normal')) return 'retry';
      const previous = this.invalid;
      this.invalid = { ...result.error, hash: result.hash };
      if (previous?.hash !== result.hash) {
        this.ctx.logger.warn(
          { file: this.path, line: result.error.line },
          `invalid file ignored, last valid version stays in effect: ${result.error.message}`,
        );
        this.ctx.emitAny({ collection: this.options.path, source: 'file' });
      }
      return 'done';
    }
    // an empty file is most likely a write caught between truncate and write: only the last look
    // takes it as "defaults" (an editor that truncates first must not reset the document meanwhile)
    if (attempt !== 'final' && result.text.trim() === '') return 'retry';
    this.invalid = null;
    if (result.hash === this.hash) return 'done';
    this.text = result.text;
    this.hash = result.hash;
    this.apply(result.value, source);
    return 'done';
  }

  async update(mutate: (current: T) => T | undefined): Promise<T> {
    return this.ctx.locks.run(this.path, () => this.updateUnlocked(mutate));
  }

  /**
   * A change from the cluster (cluster mode): written under the document's lock, marked as our own
   * write so the watcher does not take it for a hand edit, then taken in with source `cluster`.
   */
  async applyRemote(bytes: Buffer | null, stillNewer?: () => boolean, source: ChangeSource = 'cluster'): Promise<void> {
    await this.ctx.locks.run(this.path, async () => {
      if (stillNewer && !stillNewer()) return; // a writer of ours took a newer version in meanwhile
      if (source === 'restore') await commitRestore(this.ctx.replica, this.ctx.relative(this.path), bytes);
      if (!(await holds(this.path, bytes))) {
        this.writing = bytes === null ? '' : hashOf(bytes);
        this.writesStarted += 1;
        try {
          await writeOrRemove(this.path, bytes, { mode: this.options.fileMode, dirMode: this.options.dirMode });
        } finally {
          this.writing = null;
        }
      }
      await this.ingest(source, 'final');
    });
  }

  /** update() with the document's lock held. */
  private async updateUnlocked(mutate: (current: T) => T | undefined): Promise<T> {
    {
      const fresh = await this.read();
      const current = fresh.kind === 'ok' ? fresh.value : this.value;
      const next = mutate(structuredClone(current));
      if (next === undefined) return current;
      const check = checkerFor(this.options.schema);
      if (!check.Check(next))
        throw new Error(
          `store: refusing to write invalid ${this.options.path}: ${check.Errors(next).First()?.message}`,
        );
      const text = renderYaml(next, fresh.kind === 'ok' ? fresh.text : undefined);
      this.writing = hashOf(text);
      this.writesStarted += 1;
      try {
        if ((await this.ctx.replica?.commit(this.ctx.relative(this.path), text)) === 'stale') {
          // another node wrote a newer version: take it in, then mutate again on it
          this.writing = null;
          await this.ingest('cluster', 'final');
          return await this.updateUnlocked(mutate);
        }
        await writeAtomic(this.path, text, { mode: this.options.fileMode, dirMode: this.options.dirMode });
        this.text = text;
        this.hash = this.writing;
        this.invalid = null;
        this.apply(next, 'api');
      } finally {
        this.writing = null;
        this.ctx.touched(this.path);
      }
      return next;
    }
  }

  private apply(value: T, source: ChangeSource): void {
    this.value = value;
    if (source === 'file') {
      this.ctx.logger.info({ file: this.path }, 'hand edit applied');
    }
    // a hand edit or a restore on this node: the other nodes of a cluster take it too
    if (source === 'file' || source === 'restore')
      this.ctx.replica?.handEdit(this.ctx.relative(this.path), this.text ?? null);
    for (const listener of this.listeners) {
      try {
        listener(value, source);
      } catch (err) {
        this.ctx.logger.error({ err, file: this.path }, 'change listener failed');
      }
    }
    this.ctx.emitAny({ collection: this.options.path, source, action: 'updated', etag: this.hash || undefined });
  }

  private async read(): Promise<Read<T>> {
    const read = await readDataFile(this.path);
    this.ctx.read(this.path, signatureAfter(this.path, read));
    if (read.kind === 'missing') return read;
    if (read.kind === 'refused')
      return {
        kind: 'invalid',
        syntax: false,
        hash: '',
        error: { path: this.path, line: null, column: null, message: read.message },
      };
    return this.judge(read.bytes);
  }

  /** How a hand edit writing `bytes` would be judged: null when valid, else why not. */
  check(bytes: Buffer): InvalidFile | null {
    const result = this.judge(bytes);
    return result.kind === 'invalid' ? result.error : null;
  }

  private judge(bytes: Buffer): Read<T> {
    const { text, invalidAt: badByte } = decodeFileBytes(bytes);
    const hash = hashOf(text);
    const parsed = badByte ? notUtf8(this.path, badByte) : parseFileText(this.path, text);
    if (!parsed.ok) return { kind: 'invalid', error: parsed.error, syntax: parsed.syntax, hash };
    const valid = validateAgainst<T>(
      this.options.schema,
      parsed.value ?? this.options.initial(),
      this.path,
      parsed.parsed,
    );
    if (!valid.ok) return { kind: 'invalid', error: valid.error, syntax: false, hash };
    const problems = this.options.check?.(valid.value) ?? [];
    if (problems.length > 0) {
      const { path: pointer, message } = problems[0];
      return {
        kind: 'invalid',
        error: invalidAt(this.path, parsed.parsed, pointer, `${pointer.replace(/^\//, '')}: ${message}`),
        syntax: false,
        hash,
      };
    }
    const value = this.options.normalize ? this.options.normalize(valid.value) : valid.value;
    return { kind: 'ok', value, text, hash };
  }
}
