/**
 * The documents a Traefik may be running (API.md §4.19): every generation of the default document of
 * the last `live.settle_s`×3 seconds plus the latest, each turned into an ExpectedDocument once (its
 * router digests are computed at generation, never per check).
 */
import { expectDocument, type ExpectedDocument } from '../../../model/live/compare.ts';
import type { DroppedKey } from '../version-gate.ts';
import type { JsonObject } from '../../../model/types.ts';

/** What the window needs of a generation (plugins/proxy-config/service.ts `Generation`). */
export interface GenerationLike {
  served: JsonObject;
  json: { etag: string };
  generatedAt: string;
  dropped: DroppedKey[];
  result: { resources: Record<string, { emitted: boolean }> };
}

export class DocumentWindow {
  /** oldest first; the last one is the latest generation */
  private documents: ExpectedDocument[] = [];
  private latestGeneration: GenerationLike | null = null;

  constructor(private readonly settleMs: number) {}

  /** A new generation (called once per generation; the same ETag again is ignored). */
  add(generation: GenerationLike, nowMs: number): void {
    this.latestGeneration = generation;
    const last = this.documents.at(-1);
    if (last?.etag === generation.json.etag) return;
    this.documents.push(expectDocument(generation.served, generation.json.etag, Date.parse(generation.generatedAt)));
    this.prune(nowMs);
  }

  /** The latest generation (its outcomes and dropped keys), null before the first. */
  generation(): GenerationLike | null {
    return this.latestGeneration;
  }

  latest(): ExpectedDocument | null {
    return this.documents.at(-1) ?? null;
  }

  /** Documents whose run counts as `current`: those of the last settle×3 seconds plus the latest, newest first. */
  kept(nowMs: number): ExpectedDocument[] {
    this.prune(nowMs);
    return [...this.documents].reverse();
  }

  /** Documents an instance may run without being `outdated`: the latest plus those still within the settle time. */
  accepted(nowMs: number): ExpectedDocument[] {
    const latest = this.latest();
    if (!latest) return [];
    return this.kept(nowMs).filter((doc) => doc === latest || nowMs - doc.generated_at < this.settleMs);
  }

  private prune(nowMs: number): void {
    const keepFrom = nowMs - this.settleMs * 3;
    const latest = this.documents.at(-1);
    this.documents = this.documents.filter((doc) => doc === latest || doc.generated_at >= keepFrom);
  }
}
