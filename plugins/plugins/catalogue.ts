/**
 * The Traefik plugin catalogue (API.md §4.6): `GET plugins_catalogue.url`, middleware entries only,
 * `readme` dropped, cached on disk (data/.cache) for `plugins_catalogue.ttl_s`. A failed refresh
 * serves the cache marked stale; without a cache it fails with 502.
 */
import type { YamlStore } from '../../core/store/types.ts';
import { pluginErrors } from './errors.ts';

/** A catalogue entry as delivered, without `readme`. */
export type CatalogueEntry = Record<string, unknown> & { import?: string; latestVersion?: string };

export interface CatalogueAnswer {
  entries: CatalogueEntry[];
  /** True when the refresh failed and the cache was served. */
  stale: boolean;
}

export interface CatalogueOptions {
  url: string;
  ttlS: number;
  store: Pick<YamlStore, 'readRaw' | 'writeRaw'>;
  now: () => Date;
  log: { warn(obj: object, msg: string): void };
  /** Per-request time limit (default 10 s). */
  timeoutMs?: number;
}

const CACHE_FILE = '.cache/plugin-catalogue.json';

interface CacheContent {
  fetched_at: string;
  url: string;
  entries: CatalogueEntry[];
}

/** Fetches and caches the catalogue; concurrent refreshes share one request. */
export class PluginCatalogue {
  private memory: CacheContent | null = null;
  private loaded = false;
  private running: Promise<CacheContent> | null = null;

  constructor(private readonly options: CatalogueOptions) {}

  /** The entries: from a fresh cache, else fetched; `refresh` skips the cache. */
  async get(refresh = false): Promise<CatalogueAnswer> {
    const cached = await this.cached();
    const ageMs = cached ? this.options.now().getTime() - Date.parse(cached.fetched_at) : Infinity;
    if (cached && !refresh && ageMs >= 0 && ageMs < this.options.ttlS * 1000)
      return { entries: cached.entries, stale: false };
    try {
      return { entries: (await this.refresh()).entries, stale: false };
    } catch (err) {
      const message = (err as Error).message;
      if (!cached) throw pluginErrors.catalogueDown(message);
      this.options.log.warn(
        { url: this.options.url, err: message },
        'plugin catalogue refresh failed: serving the cache',
      );
      return { entries: cached.entries, stale: true };
    }
  }

  private refresh(): Promise<CacheContent> {
    this.running ??= this.fetchAndStore().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async fetchAndStore(): Promise<CacheContent> {
    const entries = await this.fetchEntries();
    const content: CacheContent = { fetched_at: this.options.now().toISOString(), url: this.options.url, entries };
    this.memory = content;
    await this.options.store.writeRaw(CACHE_FILE, JSON.stringify(content));
    return content;
  }

  private async fetchEntries(): Promise<CatalogueEntry[]> {
    let response: Response;
    try {
      response = await fetch(this.options.url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw new Error(`${this.options.url} unreachable (${cause})`, { cause: err });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`${this.options.url} answered HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new Error(`${this.options.url} answered with invalid JSON`);
    }
    if (!Array.isArray(body))
      throw new Error(`${this.options.url} answered ${body === null ? 'null' : typeof body}, expected an array`);
    return body
      .filter(
        (item): item is Record<string, unknown> =>
          typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'middleware',
      )
      .map(({ readme: _readme, ...rest }) => rest as CatalogueEntry);
  }

  /** The cache in memory, else from disk (once); a cache of another URL or unreadable is ignored. */
  private async cached(): Promise<CacheContent | null> {
    if (this.memory || this.loaded) return this.memory;
    this.loaded = true;
    try {
      const raw = await this.options.store.readRaw(CACHE_FILE);
      const parsed = raw ? (JSON.parse(raw.toString('utf8')) as CacheContent) : null;
      if (
        parsed &&
        parsed.url === this.options.url &&
        Array.isArray(parsed.entries) &&
        typeof parsed.fetched_at === 'string'
      )
        this.memory = parsed;
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message }, 'plugin catalogue cache unreadable: ignored');
    }
    return this.memory;
  }
}
