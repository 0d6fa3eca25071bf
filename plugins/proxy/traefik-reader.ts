/** Reads the Traefik API for the explorer through the answer cache (one upstream request per URL and second). */
import { fetchTraefikList, fetchTraefikObject } from '../datasource/index.ts';
import type { AnswerCache, Outcome } from './answer-cache.ts';
import type { TraefikUpstream } from './source-select.ts';

/** A Traefik API object as parsed losslessly (integers above 2^53−1 are BigInt). */
export type TraefikItem = Record<string, unknown>;

/** Cache key: the logical upstream URL (paging parameters left out: a list is always read whole). */
function keyOf(upstream: TraefikUpstream, path: string, query?: Record<string, string>): string {
  const search = query ? `?${new URLSearchParams(query).toString()}` : '';
  return `${upstream.source.url}${path}${search}`;
}

/** Cached reads of Traefik objects and whole lists; `signal` aborts running requests when the app closes. */
export class TraefikReader {
  constructor(
    private readonly cache: AnswerCache,
    private readonly signal: AbortSignal,
  ) {}

  /** A whole list (`per_page=1000`, following `X-Next-Page`); `search` is passed to Traefik. */
  list(upstream: TraefikUpstream, path: string, search?: string): Promise<Outcome<TraefikItem[]>> {
    const query = search ? { search } : undefined;
    return this.cache.get(keyOf(upstream, path, query), async () => {
      const result = await fetchTraefikList(upstream.source, path, { signal: this.signal, query });
      return result.ok ? { ok: true, value: result.items } : { ok: false, error: result.error };
    });
  }

  /** One object (`/api/overview`, `/api/version`). */
  object(upstream: TraefikUpstream, path: string): Promise<Outcome<TraefikItem>> {
    return this.cache.get(keyOf(upstream, path), async () => {
      const result = await fetchTraefikObject(upstream.source, path, { signal: this.signal });
      return result.ok ? { ok: true, value: result.body } : { ok: false, error: result.error };
    });
  }
}
