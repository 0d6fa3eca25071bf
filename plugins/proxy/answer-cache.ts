/**
 * The explorer's answer cache (API.md §4.7, §2.10 "explorer 1 s"): a successful answer is kept for
 * `ttlMs` per upstream URL, and concurrent calls for the same URL share one upstream request.
 */

/** What a read gives: a value, or an error message fit for users (the upstream client never throws). */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

interface Entry {
  promise: Promise<Outcome<unknown>>;
  /** Clock time (ms) the entry stops being served; Infinity while the request runs. */
  expires: number;
}

/** Single-flight cache with a short lifetime; one per plugin instance, cleared on close. */
export class AnswerCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly clock: () => number,
  ) {}

  /**
   * The kept or running outcome for `key`, else the one `load` gives. A failure is shared only by
   * the calls that waited for it: the next call asks again (an outage must not outlive itself).
   */
  get<T>(key: string, load: () => Promise<Outcome<T>>): Promise<Outcome<T>> {
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.promise as Promise<Outcome<T>>;
    this.sweep(now);
    const promise = load().catch((err: unknown): Outcome<T> => ({
      ok: false,
      error: `Traefik request failed: ${(err as Error).message}`,
    }));
    const entry: Entry = { promise, expires: Infinity };
    this.entries.set(key, entry);
    void promise.then((outcome) => {
      // cleared (close) or replaced meanwhile: nothing to keep
      if (this.entries.get(key) !== entry) return;
      if (outcome.ok) entry.expires = this.clock() + this.ttlMs;
      else this.entries.delete(key);
    });
    return promise;
  }

  /** Drops every entry (plugin close); running requests still settle for their callers. */
  clear(): void {
    this.entries.clear();
  }

  /** Entries kept, running ones included (tests, diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  // expired answers go on each miss, so distinct `search` values cannot pile up
  private sweep(now: number): void {
    for (const [key, entry] of this.entries) if (entry.expires <= now) this.entries.delete(key);
  }
}
