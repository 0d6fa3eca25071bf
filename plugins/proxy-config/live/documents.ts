/**
 * The documents a Traefik may be running (API.md §4.19): the latest generation of the default
 * document plus every one that was still the latest at some time in the last `live.settle_s`×3
 * seconds, each turned into an ExpectedDocument once (its router digests are computed at
 * generation, never per check). Ages count from when a document stopped being the latest, not from
 * when it was generated: a document generated an hour ago and replaced a second ago is what a
 * Traefik polling every few seconds still runs, and rightly so.
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

/** A kept document and when a newer generation replaced it (epoch ms; null while it is the latest). */
interface Kept {
  doc: ExpectedDocument;
  supersededAt: number | null;
}

export class DocumentWindow {
  /** oldest first; the last one is the latest generation */
  private documents: Kept[] = [];
  private latestGeneration: GenerationLike | null = null;

  constructor(private readonly settleMs: number) {}

  /** A new generation (called once per generation; the same ETag again is ignored). */
  add(generation: GenerationLike, nowMs: number): void {
    this.latestGeneration = generation;
    const last = this.documents.at(-1);
    if (last?.doc.etag === generation.json.etag) return;
    if (last) last.supersededAt = nowMs;
    this.documents.push({
      doc: expectDocument(generation.served, generation.json.etag, Date.parse(generation.generatedAt)),
      supersededAt: null,
    });
    this.prune(nowMs);
  }

  /** The latest generation (its outcomes and dropped keys), null before the first. */
  generation(): GenerationLike | null {
    return this.latestGeneration;
  }

  latest(): ExpectedDocument | null {
    return this.documents.at(-1)?.doc ?? null;
  }

  /**
   * Documents whose run counts as `current`: the latest plus those superseded less than settle×3
   * seconds ago, newest first.
   */
  kept(nowMs: number): ExpectedDocument[] {
    this.prune(nowMs);
    return this.documents.map((kept) => kept.doc).reverse();
  }

  /**
   * Documents an instance may run without being `outdated`: the latest plus those superseded less
   * than the settle time ago, newest first.
   */
  accepted(nowMs: number): ExpectedDocument[] {
    this.prune(nowMs);
    const accepted: ExpectedDocument[] = [];
    for (let i = this.documents.length - 1; i >= 0; i--) {
      const { doc, supersededAt } = this.documents[i];
      if (supersededAt === null || nowMs - supersededAt < this.settleMs) accepted.push(doc);
    }
    return accepted;
  }

  private prune(nowMs: number): void {
    const keepMs = this.settleMs * 3;
    this.documents = this.documents.filter(
      ({ supersededAt }) => supersededAt === null || nowMs - supersededAt < keepMs,
    );
  }
}
