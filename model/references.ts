/** References between groups' objects (resources assign middlewares and services): `used_by`, `in_use`, forced deletes. */
import type { ErrorDetail } from '../core/errors/app-error.ts';

/**
 * Something outside a group that references its objects (resources assign middlewares and
 * services). The owning group asks every registered source before a DELETE and for `used_by`.
 */
export interface ReferenceSource {
  /** API paths of the objects that reference `id`, e.g. `[{path: '/api/resources/app'}]`. */
  referrers(id: string): { path: string }[];
  /** Removes every reference to `id` (DELETE with `force=true`); sources without it block a forced delete. */
  removeReferences?(id: string): Promise<void>;
}

/** Keeps registered reference sources; `add` returns the unregister function. */
export class ReferenceRegistry {
  private readonly sources = new Set<ReferenceSource>();

  add(source: ReferenceSource): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }

  /** Referrer paths from all sources, deduplicated and sorted. */
  referrers(id: string): string[] {
    const paths = new Set<string>();
    for (const source of this.sources) for (const r of source.referrers(id)) paths.add(r.path);
    return [...paths].sort();
  }

  /** Asks each source that holds references to `id` and can drop them to do so. */
  async removeAll(id: string): Promise<void> {
    for (const source of this.sources) {
      if (source.referrers(id).length > 0 && source.removeReferences) await source.removeReferences(id);
    }
  }
}

/** `in_use` details from referrer paths. */
export const referrerDetails = (paths: string[], what: string): ErrorDetail[] =>
  paths.map((path) => ({ path, message: `references this ${what}` }));
