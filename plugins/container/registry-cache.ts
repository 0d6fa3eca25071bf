/**
 * Registry digests per image reference, cached `containers.updates_ttl_s` (API.md §2.10: 10 min).
 * Failures are cached too, so a broken registry is not asked again on every request; concurrent
 * requests for one reference share a single lookup.
 */

export interface RegistryAnswer {
  latest_digest: string | null;
  /** Why there is no digest (registry error, unknown reference), else null. */
  error: string | null;
  checked_at: string;
}

interface Entry {
  answer: Promise<RegistryAnswer>;
  expires: number;
}

export class RegistryDigestCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    /** Resolves a digest or a registry error message; rejects only when Docker itself failed (not cached). */
    private readonly lookup: (reference: string) => Promise<{ digest: string } | { error: string }>,
    private readonly ttlMs: number,
    private readonly now: () => Date,
  ) {}

  /** The cached answer for `reference`, or a fresh lookup when expired, absent or `refresh`. */
  get(reference: string, refresh: boolean): Promise<RegistryAnswer> {
    const now = this.now().getTime();
    const entry = this.entries.get(reference);
    if (entry && !refresh && entry.expires > now) return entry.answer;
    const checkedAt = new Date(now).toISOString();
    const answer = this.lookup(reference).then((result): RegistryAnswer =>
      'digest' in result
        ? { latest_digest: result.digest, error: null, checked_at: checkedAt }
        : { latest_digest: null, error: result.error, checked_at: checkedAt },
    );
    const fresh = { answer, expires: now + this.ttlMs };
    this.entries.set(reference, fresh);
    // Docker being down says nothing about the registry: forget it so the next request asks again
    answer.catch(() => {
      if (this.entries.get(reference) === fresh) this.entries.delete(reference);
    });
    return answer;
  }

  clear(): void {
    this.entries.clear();
  }
}
