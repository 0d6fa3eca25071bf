/**
 * The data sources of datasources.yaml (API.md §4.5): views without passwords, merge-on-PUT, the
 * active source for the discovery poller, and probes. The store document is the only state.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { errors } from '../../core/errors/app-error.ts';
import { SLUG, SLUG_PATTERN } from '../../core/ids.ts';
import type { ChangeSource, StoreDocument } from '../../core/store/types.ts';
import { datasourceErrors } from './errors.ts';
import { stringifyCanonical } from '../../model/lossless-json.ts';
import type { DataSourcesFile, DataSourceView, DataSourceWriteBody, StoredSource } from './schemas.ts';
import { mergeSource } from './source-input.ts';
import type { UpstreamState } from '../../model/upstream-state.ts';
import { probeSource, type ProbeResult, type UpstreamSource } from './upstream-client.ts';
import { ifMatchAccepts } from '../../model/http.ts';

/**
 * `active: none` in datasources.yaml (API.md §4.24): data source mode `none`, no source is polled
 * and the provider serves Stack Manager's own objects only (a Traefik + CrowdSec stack without
 * Pangolin). A reserved name: no source may be called so.
 */
export const NO_DATA_SOURCE = 'none';

/** What the provider config is generated from: the active source's type, or `none`. */
export type DataSourceMode = 'pangolin' | 'traefik' | 'none';

/** The active source as the discovery poller needs it: credentials included, never serialised. */
export interface ActiveDataSource {
  name: string;
  source: UpstreamSource & { poll_interval_s: number };
}

/** What other groups use (`app.datasources`): the discovery poller reads the active source and follows its changes. */
export interface DataSourceRegistry {
  /** The active source with its credentials, or null when `active` names no valid source. A copy. */
  active(): ActiveDataSource | null;
  /** The active source's type; `none` in mode none; `pangolin` when `active` names nothing (no config until fixed). */
  mode(): DataSourceMode;
  /** One source as the API shows it (no password). */
  get(name: string): DataSourceView | undefined;
  /** One source with its credentials, for groups that call it (the proxy explorer); a copy. */
  source(name: string): (UpstreamSource & { poll_interval_s: number }) | null;
  /** All sources as the API shows them, sorted by name. */
  list(): DataSourceView[];
  /** Every `traefik`-type source with its credentials, sorted by name (the groups that ask each Traefik). */
  traefikSources(): Array<{ name: string; source: UpstreamSource & { poll_interval_s: number } }>;
  /** Called when the active source or any of its settings change (API or hand edit); returns the unsubscribe function. */
  onChange(listener: (active: ActiveDataSource | null) => void): () => void;
}

export interface DataSourceServiceOptions {
  document: StoreDocument<DataSourcesFile>;
  upstream: UpstreamState;
  now: () => Date;
  log: FastifyBaseLogger;
}

const ISO = (value: string | undefined): string | null =>
  value !== undefined && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : null;

const upstreamSourceOf = (entry: StoredSource): UpstreamSource & { poll_interval_s: number } => ({
  type: entry.type,
  url: entry.url,
  skip_tls_verify: entry.skip_tls_verify,
  basic_auth: entry.basic_auth ? { ...entry.basic_auth } : null,
  timeout_ms: entry.timeout_ms,
  poll_interval_s: entry.poll_interval_s,
});

/** Holds the views of datasources.yaml and performs the API's writes through the store. */
export class DataSourceService implements DataSourceRegistry {
  private readonly document: StoreDocument<DataSourcesFile>;
  private readonly upstream: UpstreamState;
  private readonly now: () => Date;
  private readonly log: FastifyBaseLogger;
  private readonly listeners = new Set<(active: ActiveDataSource | null) => void>();
  /**
   * Key for the password's share of an ETag. A plain hash of the entry would let anyone who can
   * read an ETag test password guesses offline; the cost is new ETags after a restart.
   */
  private readonly etagKey = randomBytes(32);
  private readonly closing = new AbortController();
  /** First time an entry without timestamps was seen (hand edits may leave them out, API.md §3.3). */
  private readonly firstSeen = new Map<string, string>();
  private activeKey: string;
  private readonly unsubscribe: () => void;

  constructor(options: DataSourceServiceOptions) {
    ({ document: this.document, upstream: this.upstream, now: this.now, log: this.log } = options);
    this.activeKey = stringifyCanonical(this.active());
    this.reportProblems();
    this.unsubscribe = this.document.onChange((_value, source) => this.changed(source));
  }

  active(): ActiveDataSource | null {
    const { active, sources } = this.document.get();
    const entry = SLUG.test(active) ? sources[active] : undefined;
    return entry ? { name: active, source: upstreamSourceOf(entry) } : null;
  }

  mode(): DataSourceMode {
    const active = this.active();
    if (active) return active.source.type;
    return this.document.get().active === NO_DATA_SOURCE ? 'none' : 'pangolin';
  }

  source(name: string): (UpstreamSource & { poll_interval_s: number }) | null {
    const entry = SLUG.test(name) ? this.document.get().sources[name] : undefined;
    return entry ? upstreamSourceOf(entry) : null;
  }

  get(name: string): DataSourceView | undefined {
    const entry = SLUG.test(name) ? this.document.get().sources[name] : undefined;
    return entry && this.view(name, entry);
  }

  list(): DataSourceView[] {
    return this.validNames()
      .sort()
      .map((name) => this.view(name, this.document.get().sources[name]));
  }

  traefikSources(): Array<{ name: string; source: UpstreamSource & { poll_interval_s: number } }> {
    return this.list()
      .filter((view) => view.type === 'traefik')
      .flatMap((view) => {
        const source = this.source(view.name);
        return source ? [{ name: view.name, source }] : [];
      });
  }

  onChange(listener: (active: ActiveDataSource | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** GET /api/datasource/active: 404 when `active` names no source. */
  activeView(): DataSourceView {
    const active = this.active();
    if (!active && this.mode() === 'none') throw datasourceErrors.modeNone();
    if (!active) throw datasourceErrors.noActive(this.document.get().active);
    return this.get(active.name)!;
  }

  /** PUT /api/datasource/active; the caller starts the sync. `none` (mode none) answers null. */
  async setActive(name: string): Promise<DataSourceView | null> {
    await this.document.update((file) => {
      if (!file.sources[name] && name !== NO_DATA_SOURCE) throw datasourceErrors.unknownActive(name);
      if (file.active === name) return undefined;
      return { ...file, active: name };
    });
    return name === NO_DATA_SOURCE ? null : this.get(name)!;
  }

  /** PUT /api/datasource/:name: creates, or merges the body over the stored source. */
  async put(
    name: string,
    body: DataSourceWriteBody,
    ifMatch?: string,
  ): Promise<{ view: DataSourceView; created: boolean }> {
    if (name === NO_DATA_SOURCE) throw datasourceErrors.reservedName(name);
    let created = false;
    await this.document.update((file) => {
      const stored = file.sources[name];
      if (!ifMatchAccepts(ifMatch, stored && this.etagOf(stored))) throw errors.preconditionFailed();
      const settings = mergeSource(stored, body);
      created = !stored;
      if (stored && stringifyCanonical(settings) === stringifyCanonical(mergeSource(stored, {}))) return undefined;
      const now = this.now().toISOString();
      const created_at = stored?.created_at ?? this.firstSeen.get(name) ?? now;
      return { ...file, sources: { ...file.sources, [name]: { ...settings, created_at, updated_at: now } } };
    });
    return { view: this.get(name)!, created };
  }

  /** DELETE /api/datasource/:name: 409 while it is the active source. */
  async remove(name: string, ifMatch?: string): Promise<void> {
    await this.document.update((file) => {
      const stored = file.sources[name];
      if (!stored) throw datasourceErrors.notFound(name);
      if (!ifMatchAccepts(ifMatch, this.etagOf(stored))) throw errors.preconditionFailed();
      if (file.active === name) throw datasourceErrors.activeInUse(name);
      const { [name]: _removed, ...sources } = file.sources;
      return { ...file, sources };
    });
    this.firstSeen.delete(name);
  }

  /** POST /api/datasource/:name/test: probes the stored settings with the body merged over them. */
  async test(name: string, body: DataSourceWriteBody): Promise<ProbeResult> {
    const stored = this.document.get().sources[name];
    if (!stored && (body.type === undefined || body.url === undefined)) throw datasourceErrors.notFound(name);
    const settings = mergeSource(stored, body);
    return probeSource(upstreamSourceOf({ ...settings }), { signal: this.closing.signal });
  }

  /** Health check `datasource`: throws the probe's error (or why there is no active source). */
  async probeActive(signal?: AbortSignal): Promise<void> {
    const active = this.active();
    // mode none polls nothing: there is nothing to be unhealthy about
    if (!active && this.mode() === 'none') return;
    if (!active) throw new Error(datasourceErrors.noActive(this.document.get().active).message);
    const signals = signal ? [signal, this.closing.signal] : [this.closing.signal];
    const result = await probeSource(active.source, { signal: AbortSignal.any(signals) });
    if (!result.ok) throw new Error(result.error ?? `data source ${active.name} failed its probe`);
  }

  /** Stops listening and aborts running probes (app close). */
  close(): void {
    this.unsubscribe();
    this.closing.abort();
  }

  private validNames(): string[] {
    return Object.keys(this.document.get().sources).filter((name) => SLUG.test(name));
  }

  private etagOf(entry: StoredSource): string {
    const hashed = entry.basic_auth
      ? {
          ...entry,
          basic_auth: {
            ...entry.basic_auth,
            password: createHmac('sha256', this.etagKey).update(entry.basic_auth.password).digest('hex'),
          },
        }
      : entry;
    return createHash('sha256').update(stringifyCanonical(hashed)).digest('hex').slice(0, 32);
  }

  private view(name: string, entry: StoredSource): DataSourceView {
    const seen = this.firstSeenAt(name);
    return {
      name,
      type: entry.type,
      url: entry.url,
      skip_tls_verify: entry.skip_tls_verify,
      basic_auth: entry.basic_auth
        ? { username: entry.basic_auth.username, password_set: entry.basic_auth.password.length > 0 }
        : null,
      poll_interval_s: entry.poll_interval_s,
      timeout_ms: entry.timeout_ms,
      active: this.document.get().active === name,
      last_sync: this.upstream.lastSync(name),
      created_at: ISO(entry.created_at) ?? seen,
      updated_at: ISO(entry.updated_at) ?? ISO(entry.created_at) ?? seen,
      etag: this.etagOf(entry),
    };
  }

  private firstSeenAt(name: string): string {
    let at = this.firstSeen.get(name);
    if (!at) {
      at = this.now().toISOString();
      this.firstSeen.set(name, at);
    }
    return at;
  }

  /** After every change of the file: notify the poller when the active source changed, report problems. */
  private changed(source: ChangeSource): void {
    const active = this.active();
    const key = stringifyCanonical(active);
    if (source === 'file' || source === 'restore' || source === 'cluster') this.reportProblems();
    if (key === this.activeKey) return;
    this.activeKey = key;
    this.log.info({ active: active?.name ?? null, source }, 'active data source changed');
    for (const listener of this.listeners) {
      try {
        listener(active && structuredClone(active));
      } catch (err) {
        this.log.error({ err }, 'data source change listener failed');
      }
    }
  }

  /** Hand edits the schema cannot catch: bad source names and an `active` naming nothing. */
  private reportProblems(): void {
    const { active, sources } = this.document.get();
    const bad = Object.keys(sources).filter((name) => !SLUG.test(name));
    if (bad.length > 0)
      this.log.warn(
        { file: this.document.path, names: bad },
        `datasources.yaml: sources with invalid names are ignored (names must match ${SLUG_PATTERN})`,
      );
    if (!this.active() && this.mode() === 'none')
      this.log.info({ file: this.document.path }, 'data source mode none: only own objects are served');
    else if (!this.active())
      this.log.warn(
        { file: this.document.path, active },
        'datasources.yaml: the active data source names no valid source; nothing is polled',
      );
  }
}
