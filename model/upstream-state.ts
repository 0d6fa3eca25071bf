/**
 * What the last successful sync of the active data source left behind, shared with the groups that
 * need it: the last good upstream body (Pangolin mode), the keys it defines, discovered services.
 */
import type { ChangeSource } from '../core/store/types.ts';

export type SourceType = 'pangolin' | 'traefik';
export type UpstreamSection =
  | 'http.middlewares'
  | 'http.routers'
  | 'http.services'
  | 'tcp.routers'
  | 'tcp.services'
  | 'udp.routers'
  | 'udp.services';

/** A service mirrored from the upstream: read-only, in memory, rebuilt on every successful sync (API.md §4.3). */
export interface DiscoveredService {
  id: string;
  name: string;
  protocol: 'http' | 'tcp' | 'udp';
  type: string;
  config: Record<string, unknown>;
  provider: string;
  upstream_name: string;
  status: 'active' | 'disabled';
}

export interface UpstreamSnapshot {
  /** Type of the active source when the snapshot was taken. */
  mode: SourceType;
  /** Name of the source. */
  source: string;
  /** Pangolin mode: the last good body (parsed losslessly); Traefik mode: null. */
  body: Record<string, unknown> | null;
  /** sha256 of the raw body (Pangolin) or of the router list (Traefik). */
  hash: string;
  fetched_at: string;
}

type Listener = (reason: ChangeSource | 'sync') => void;

/** Latest poll of one source, as `last_sync` of GET /api/datasource shows it (API.md §4.5). */
export interface LastSync {
  at: string;
  ok: boolean;
  error: string | null;
  routers: number | null;
  empty_streak: number;
}

/** Syncs of one source since start: successes, failures, and when the last success was. */
export interface SyncTotals {
  ok: number;
  failed: number;
  lastOkAt: string | null;
}

/** What a forced sync reports back (POST /api/proxy-config/invalidate, PUT /api/datasource/active). */
export interface SyncOutcome {
  ok: boolean;
  error: string | null;
  /** Whether the upstream snapshot or any resource changed. */
  changed: boolean;
}

/** A source's sync turned ok or failed, or failed with another message (the `upstream` event, API.md §4.17). */
export interface SyncStateChange {
  source: string;
  state: 'ok' | 'failed';
  message: string | null;
}

export type SyncHandler = (reason: 'startup' | 'interval' | 'forced' | 'source_changed') => Promise<SyncOutcome>;

/** Holder of the upstream view; the datasource group updates it, others read and subscribe. */
export class UpstreamState {
  private snapshot: UpstreamSnapshot | null = null;
  private services: DiscoveredService[] = [];
  private keyIndex = new Map<UpstreamSection, Set<string>>();
  private readonly listeners = new Set<Listener>();
  /** Whether the latest fetch failed (the snapshot is then stale). */
  stale = false;
  lastError: string | null = null;
  lastErrorAt: string | null = null;
  lastOkAt: string | null = null;

  private readonly lastSyncs = new Map<string, LastSync>();
  /** Syncs recorded per source since start, and the last successful one (GET /metrics, API.md §4.22). */
  private readonly syncTotals = new Map<string, SyncTotals>();
  private syncHandler: SyncHandler | null = null;

  /** `onStateChange` hears of transitions only, not of every poll. */
  constructor(private readonly onStateChange: (change: SyncStateChange) => void = () => undefined) {}

  /** The discovery poller (resources group) registers how a sync is run. */
  setSyncHandler(handler: SyncHandler): void {
    this.syncHandler = handler;
  }

  /** Runs a sync now (forced fetch + discovery); without a poller it reports that nothing ran. */
  async requestSync(reason: Parameters<SyncHandler>[0] = 'forced'): Promise<SyncOutcome> {
    if (!this.syncHandler) return { ok: false, error: 'discovery is not running', changed: false };
    return this.syncHandler(reason);
  }

  recordSync(source: string, sync: LastSync): void {
    const previous = this.lastSyncs.get(source);
    this.lastSyncs.set(source, sync);
    let totals = this.syncTotals.get(source);
    if (!totals) this.syncTotals.set(source, (totals = { ok: 0, failed: 0, lastOkAt: null }));
    if (sync.ok) {
      totals.ok += 1;
      totals.lastOkAt = sync.at;
    } else totals.failed += 1;
    if (!previous || previous.ok !== sync.ok || previous.error !== sync.error) {
      this.onStateChange({ source, state: sync.ok ? 'ok' : 'failed', message: sync.error });
    }
    if (sync.ok) {
      this.stale = false;
      this.lastOkAt = sync.at;
    } else {
      this.stale = true;
      this.lastError = sync.error;
      this.lastErrorAt = sync.at;
    }
  }

  /** Syncs per source since start (counters for GET /metrics). */
  totals(): ReadonlyMap<string, Readonly<SyncTotals>> {
    return this.syncTotals;
  }

  lastSync(source: string): LastSync | null {
    return this.lastSyncs.get(source) ?? null;
  }

  current(): UpstreamSnapshot | null {
    return this.snapshot;
  }

  discoveredServices(): DiscoveredService[] {
    return this.services;
  }

  /** True when the upstream configuration defines `key` in `section` (for 409 already_exists). */
  hasKey(section: UpstreamSection, key: string): boolean {
    return this.keyIndex.get(section)?.has(key) ?? false;
  }

  /** Replaces the snapshot and the discovered services, then notifies subscribers. */
  update(snapshot: UpstreamSnapshot | null, services: DiscoveredService[]): void {
    this.snapshot = snapshot;
    this.services = services;
    this.keyIndex = indexKeys(snapshot?.body ?? null, services);
    this.notify('sync');
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(reason: ChangeSource | 'sync'): void {
    for (const listener of this.listeners) listener(reason);
  }
}

function indexKeys(
  body: Record<string, unknown> | null,
  services: DiscoveredService[],
): Map<UpstreamSection, Set<string>> {
  const index = new Map<UpstreamSection, Set<string>>();
  const sections: UpstreamSection[] = [
    'http.middlewares',
    'http.routers',
    'http.services',
    'tcp.routers',
    'tcp.services',
    'udp.routers',
    'udp.services',
  ];
  for (const section of sections) {
    const [protocol, kind] = section.split('.');
    const map = (body?.[protocol] as Record<string, unknown> | undefined)?.[kind];
    index.set(section, new Set(map && typeof map === 'object' ? Object.keys(map) : []));
  }
  for (const s of services)
    index.get(`${s.protocol}.services` as UpstreamSection)!.add(s.upstream_name.replace(/@[^@]*$/, ''));
  return index;
}
