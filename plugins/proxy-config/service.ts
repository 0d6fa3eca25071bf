/**
 * The provider config, generated when an input changes and served from memory (API.md §4.9 G1,
 * G3, G11–G13). Regenerations are coalesced: a burst of changes (1,000 files at startup, a sync
 * that touches many resources) gives one generation.
 */
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { generateConfig, type GenerationInput, type GenerationResult } from '../../model/generate/generate.ts';
import { PatchMemo } from '../../model/generate/generate-memo.ts';
import { etagOf, FragmentCache, serializeJson, serializeYaml } from './serialize.ts';
import { DutyCycle } from './duty-cycle.ts';
import type { SchemaChecker, SchemaWarning } from './schema-check.ts';
import { VersionGate, type DroppedKey, type GatedDocument } from './version-gate.ts';
import type { JsonObject } from '../../model/types.ts';

const gzipAsync = promisify(gzip);
/** Bodies at or below this size are sent uncompressed (API.md §4.9: gzip when > 1 KiB). */
export const GZIP_MIN_BYTES = 1024;

export interface Encoded {
  body: Buffer;
  etag: string;
  /** gzip form, compressed once per generation on the thread pool; null until ready or when small. */
  gzip: Buffer | null;
}

/** One generated configuration: JSON now, YAML on first request (serialising YAML costs ~20× JSON). */
export class Generation {
  readonly json: Encoded;
  private yamlForm: Encoded | null = null;
  schemaWarnings: SchemaWarning[] = [];
  /** What is served: `result.config` through the version gate (G14); targets derive from `result.config`. */
  readonly served: JsonObject;
  /** Keys the version gate left out of `served` (Status `dropped_keys`). */
  dropped: DroppedKey[];

  constructor(
    public result: GenerationResult,
    readonly generatedAt: string,
    fragments?: FragmentCache,
    gated?: GatedDocument,
  ) {
    this.served = gated?.config ?? result.config;
    this.dropped = gated?.dropped ?? [];
    const body = serializeJson(this.served, fragments);
    this.json = { body, etag: etagOf(body), gzip: null };
  }

  get yaml(): Encoded {
    if (!this.yamlForm) {
      const body = serializeYaml(this.served);
      this.yamlForm = { body, etag: etagOf(body), gzip: null };
      void compress(this.yamlForm);
    }
    return this.yamlForm;
  }
}

/** Fills `encoded.gzip`; on failure the plain body keeps being served (gzip is optional). */
async function compress(encoded: Encoded): Promise<void> {
  if (encoded.body.length <= GZIP_MIN_BYTES) return;
  try {
    encoded.gzip = await gzipAsync(encoded.body);
  } catch {
    encoded.gzip = null;
  }
}

export interface ProviderLogger {
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ConfigProviderOptions {
  /** Current inputs, or null when no config can be produced (Pangolin mode, upstream never fetched). */
  inputs: () => GenerationInput | null;
  schemaCheck: SchemaChecker | null;
  logger: ProviderLogger;
  now: () => Date;
  /** Version of the Traefik polling the default document (G14), null when unknown. */
  traefikVersion?: () => string | null;
}

/** The first schema check waits this long after its generation (startup: see runOnce). */
export const FIRST_SCHEMA_CHECK_DELAY_MS = 2000;

export class ConfigProvider {
  private generation: Generation | null = null;
  private pending: Promise<Generation | null> | null = null;
  private dirty = false;
  private readonly pace = new DutyCycle();
  private readonly fragments = new FragmentCache();
  private readonly memo = new PatchMemo();
  private readonly gate = new VersionGate();
  private closed = false;
  /** true once a schema check ran (the schema is compiled) */
  private schemaChecked = false;
  private readonly listeners = new Set<(generation: Generation) => void>();
  private readonly runListeners = new Set<(seconds: number, changed: boolean) => void>();

  constructor(private readonly options: ConfigProviderOptions) {}

  /** The config being served, or null when none was ever produced. */
  current(): Generation | null {
    return this.generation;
  }

  /** Subscribes to new generations (bytes changed). */
  onGenerated(listener: (generation: Generation) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Subscribes to every generation run, bytes changed or not, with its duration (GET /metrics). */
  onRun(listener: (seconds: number, changed: boolean) => void): () => void {
    this.runListeners.add(listener);
    return () => this.runListeners.delete(listener);
  }

  /** Marks the inputs changed; one regeneration runs for any number of calls in the same tick. */
  invalidate(): void {
    if (this.closed) return;
    this.dirty = true;
    if (!this.pending) this.pending = this.drain();
  }

  /** Regenerates now (after any regeneration already running) and resolves with the result. */
  async regenerate(): Promise<Generation | null> {
    this.invalidate();
    return this.pending ?? this.generation;
  }

  close(): void {
    this.closed = true;
  }

  private async drain(): Promise<Generation | null> {
    try {
      let since = performance.now();
      while (this.dirty && !this.closed) {
        this.dirty = false;
        // let the burst finish, paced by the last generation's duration (duty-cycle.ts)
        await new Promise<void>((resolve) => this.pace.schedule(resolve));
        // a change stream that never pauses still gets a generation at least every second
        if (this.dirty && performance.now() - since < 1000) continue;
        this.dirty = false;
        this.pace.run(() => this.runOnce());
        since = this.pace.endedAt;
      }
      return this.generation;
    } finally {
      this.pending = null;
    }
  }

  private runOnce(): void {
    let input: GenerationInput | null;
    try {
      input = this.options.inputs();
      if (!input) return;
      const start = performance.now();
      const result = generateConfig(input, this.memo);
      const gated = this.gate.apply(result.config, this.options.traefikVersion?.() ?? null);
      const next = new Generation(result, this.options.now().toISOString(), this.fragments, gated);
      const elapsed = performance.now() - start;
      const ms = Math.round(elapsed); // generation + JSON + ETag
      const changed = !this.generation || this.generation.json.etag !== next.json.etag;
      for (const listener of this.runListeners) listener(elapsed / 1000, changed);
      if (!changed && this.generation) {
        // same bytes, but conflicts, dangling references and outcomes may differ (status reports them)
        this.generation.result = result;
        this.generation.dropped = gated.dropped;
        this.options.logger.debug({ etag: next.json.etag }, 'provider config regenerated: unchanged');
        return;
      }
      this.generation = next;
      void compress(next.json);
      this.options.logger.info(
        { etag: next.json.etag, ms, bytes: next.json.body.length, ...result.counts, ...this.memo.stats },
        'provider config regenerated',
      );
      // schema check (G13) after the swap: it reports, it never holds back serving. The first one
      // compiles the Traefik schema (~0.25 s): it waits until startup's generations have settled,
      // so it does not delay the first sync's config (issue 11); a generation replaced by then is
      // not checked, its successor is
      const delay = this.schemaChecked ? 0 : FIRST_SCHEMA_CHECK_DELAY_MS;
      const timer = setTimeout(() => {
        if (!this.options.schemaCheck || this.generation !== next || this.closed) return;
        this.schemaChecked = true;
        next.schemaWarnings = this.options.schemaCheck(next.served);
      }, delay);
      timer.unref();
      for (const listener of this.listeners) listener(next);
    } catch (err) {
      // the last good config keeps being served; the failure is visible in the log and status
      this.options.logger.error({ err }, 'provider config generation failed');
    }
  }
}
