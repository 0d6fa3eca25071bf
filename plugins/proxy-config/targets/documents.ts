/**
 * The targets' documents, built beside the default one (never in its request path): after each new
 * default generation and each change of a target, every target's document is derived
 * (filter.ts), serialised canonically, given its own ETag and gzip-compressed once. Requests only
 * pick the prepared bytes, as for the default document.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { StoredObject } from '../../../core/store/types.ts';
import type { DanglingReference } from '../../../model/generate/generate.ts';
import type { JsonObject } from '../../../model/types.ts';
import { etagOf, FragmentCache, serializeJson, serializeYaml } from '../serialize.ts';
import { GZIP_MIN_BYTES, type Encoded } from '../service.ts';
import type { Servable } from '../snapshot.ts';
import { DutyCycle } from '../duty-cycle.ts';
import { newTargetMemo, targetConfig, type TargetMemo } from './filter.ts';
import type { TargetData } from './schemas.ts';
import { VersionGate, type DroppedKey } from '../version-gate.ts';

const gzipAsync = promisify(gzip);

/** One target's prepared document. */
export class TargetDocument implements Servable {
  readonly json: Encoded;
  private yamlForm: Encoded | null = null;

  constructor(
    readonly config: JsonObject,
    readonly generatedAt: string,
    public dangling: DanglingReference[],
    fragments: FragmentCache,
    /** the Traefik version it is gated for, and what the gate left out (G14) */
    public traefikVersion: string | null = null,
    public dropped: DroppedKey[] = [],
  ) {
    const body = serializeJson(config, fragments);
    this.json = { body, etag: etagOf(body), gzip: null };
  }

  get yaml(): Encoded {
    if (!this.yamlForm) {
      const body = serializeYaml(this.config);
      this.yamlForm = { body, etag: etagOf(body), gzip: null };
      void compress(this.yamlForm);
    }
    return this.yamlForm;
  }
}

async function compress(encoded: Encoded): Promise<void> {
  if (encoded.body.length <= GZIP_MIN_BYTES) return;
  try {
    encoded.gzip = await gzipAsync(encoded.body);
  } catch {
    encoded.gzip = null; // the plain body keeps being served
  }
}

export interface TargetDocumentsOptions {
  /** The default document's config, or null before the first generation. */
  defaultConfig: () => JsonObject | null;
  targets: () => StoredObject<TargetData>[];
  /** Router keys each known resource owns in the given (default) document. */
  resourceRouters: (config: JsonObject) => ReadonlyMap<string, readonly string[]>;
  /** The version of the Traefik polling the default document (a target without its own takes it). */
  defaultVersion?: () => string | null;
  now: () => Date;
  /** A target's bytes changed (the `provider` event). */
  onChanged: (id: string, document: TargetDocument) => void;
  onError: (err: unknown, id: string) => void;
}

export class TargetDocuments {
  private readonly documents = new Map<string, TargetDocument>();
  private readonly fragments = new Map<string, FragmentCache>();
  /** Per target: what it remembers per router object (filter.ts TargetMemo), valid for the stored version (`data` object) it was made for. */
  private readonly memos = new Map<string, { data: TargetData; memo: TargetMemo }>();
  private readonly gates = new Map<string, VersionGate>();
  private scheduled = false;
  private closed = false;
  private readonly pace = new DutyCycle();

  constructor(private readonly options: TargetDocumentsOptions) {}

  get(id: string): TargetDocument | undefined {
    return this.documents.get(id);
  }

  /**
   * Rebuilds every target's document soon: any number of calls coalesce into one rebuild, paced
   * as the provider's generations are (duty-cycle.ts), so a discovery sync changing resources one
   * by one costs at most half the CPU.
   */
  invalidate(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    this.pace.schedule(
      () => {
        this.scheduled = false;
        if (!this.closed) this.pace.run(() => this.rebuild());
      },
      { unref: true },
    );
  }

  /** Rebuilds now; a target whose bytes are unchanged keeps its document (and its ETag and generated_at). */
  rebuild(): void {
    const config = this.options.defaultConfig();
    const targets = this.options.targets();
    const live = new Set(targets.map((t) => t.id));
    for (const id of this.documents.keys()) {
      if (!live.has(id)) {
        this.documents.delete(id);
        this.fragments.delete(id);
        this.memos.delete(id);
        this.gates.delete(id);
      }
    }
    // no target, nothing to build: the router map below costs tens of ms per rebuild at 10k resources
    if (!config || targets.length === 0) return;
    const routers = this.options.resourceRouters(config);
    const generatedAt = this.options.now().toISOString();
    for (const target of targets) {
      try {
        let fragments = this.fragments.get(target.id);
        if (!fragments) this.fragments.set(target.id, (fragments = new FragmentCache()));
        let match = this.memos.get(target.id);
        if (match?.data !== target.data)
          this.memos.set(target.id, (match = { data: target.data, memo: newTargetMemo() }));
        const output = targetConfig(config, target.id, target.data, routers, match.memo);
        let gate = this.gates.get(target.id);
        if (!gate) this.gates.set(target.id, (gate = new VersionGate()));
        const version = target.data.traefik_version ?? this.options.defaultVersion?.() ?? null;
        const gated = gate.apply(output.config, version);
        const next = new TargetDocument(gated.config, generatedAt, output.dangling, fragments, version, gated.dropped);
        const previous = this.documents.get(target.id);
        if (previous && previous.json.etag === next.json.etag) {
          previous.dangling = output.dangling; // same bytes; what is missing may still differ
          previous.traefikVersion = version;
          previous.dropped = gated.dropped;
          continue;
        }
        this.documents.set(target.id, next);
        void compress(next.json);
        this.options.onChanged(target.id, next);
      } catch (err) {
        // that target keeps its last document; the others are built
        this.options.onError(err, target.id);
      }
    }
  }

  close(): void {
    this.closed = true;
  }
}
