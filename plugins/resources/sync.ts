/**
 * One discovery sync (API.md §4.4, G3): fetch the active source, reconcile the resources, publish
 * the upstream snapshot and discovered services, cache the last good Pangolin body. A failed fetch
 * changes nothing; an empty answer after a non-empty one waits for `discovery.empty_confirmations`.
 */
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { YamlStore } from '../../core/store/types.ts';
import { discoveredServicesFrom, servicesFromPangolin, servicesFromTraefik } from '../../model/discovered-services.ts';
import {
  ownObjectMatcher,
  routersFromPangolin,
  routersFromTraefik,
  splitKey,
  type UpstreamRouter,
} from '../../model/upstream-routers.ts';
import { parseLossless, stringifyCanonical } from '../../model/lossless-json.ts';
import type { DiscoveredService, UpstreamState } from '../../model/upstream-state.ts';
import { fetchPangolinConfig, fetchTraefikRouters, fetchTraefikServices } from '../datasource/index.ts';
import type { ActiveDataSource as ActiveSource } from '../datasource/index.ts';
import { applyRouters, type ApplyResult } from './apply.ts';
import { FailureStreak } from './failure-streak.ts';
import type { ResourceRepository } from './repository.ts';

/** What one sync did; `changed` covers resources and the published snapshot. */
export interface SyncReport {
  ok: boolean;
  error: string | null;
  changed: boolean;
  duration_ms: number;
  routers: number | null;
  written: number;
}

export interface SyncDeps {
  log: FastifyBaseLogger;
  store: Pick<YamlStore, 'readRaw' | 'writeRaw'>;
  upstream: UpstreamState;
  repository: ResourceRepository;
  now: () => Date;
  discovery: { exclude: string[]; empty_confirmations: number };
  /** Ids of manual and template services: taken for discovered ids, and ours in Traefik mode. */
  ownServiceIds: () => string[];
}

type Fetched = {
  routers: UpstreamRouter[];
  routerCount: number;
  hash: string;
  body: Record<string, unknown> | null;
  text: string | null;
  services: DiscoveredService[];
  traefikRouters: Array<Record<string, unknown>> | null;
};

const cachePath = (name: string) => `.cache/upstream-${name}.json`;
const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** Runs syncs for one app; keeps the empty-answer streak and the last Traefik router list. */
export class DiscoverySync {
  private emptyStreak = 0;
  private lastWasNonEmpty = false;
  private sourceKey: string | null = null;
  private cachedHash: string | null = null;
  private routerList: Array<Record<string, unknown>> | null = null;
  private readonly failures: FailureStreak;

  constructor(private readonly deps: SyncDeps) {
    this.failures = new FailureStreak(deps.log);
  }

  /** Identical failed syncs in a row (0 after a success): the poller backs off on it. */
  get failureStreak(): number {
    return this.failures.streak;
  }

  /** The last applied Traefik `/api/http/routers` list without our own routers (Traefik mode), else null. */
  traefikRouters(): Array<Record<string, unknown>> | null {
    return this.routerList;
  }

  /**
   * Switches to a source: resets the empty-answer state and, for Pangolin, publishes the cached
   * last good body as a stale snapshot until the first fetch succeeds (G3).
   */
  async useSource(active: ActiveSource | null): Promise<void> {
    const key = active ? `${active.name} ${active.source.type}` : null;
    if (key === this.sourceKey) return;
    this.sourceKey = key;
    this.emptyStreak = 0;
    this.lastWasNonEmpty = false;
    this.cachedHash = null;
    this.routerList = null;
    this.failures.reset();
    if (!active || active.source.type !== 'pangolin') return;
    const raw = await this.deps.store.readRaw(cachePath(active.name));
    if (!raw) return;
    let body: unknown;
    try {
      body = parseLossless(raw.toString('utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      this.deps.log.warn({ err, source: active.name }, 'cached upstream body is not valid JSON; ignored');
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
    this.cachedHash = sha256(raw);
    this.lastWasNonEmpty = routersFromPangolin(body).length > 0;
    const services = discoveredServicesFrom(servicesFromPangolin(body), { takenIds: this.deps.ownServiceIds() });
    const fetchedAt = this.deps.now().toISOString();
    this.deps.upstream.update(
      {
        mode: 'pangolin',
        source: active.name,
        body: body as Record<string, unknown>,
        hash: this.cachedHash,
        fetched_at: fetchedAt,
      },
      services,
    );
    this.deps.upstream.stale = true;
    this.deps.log.info(
      { source: active.name },
      'loaded the cached upstream body (stale until the first successful fetch)',
    );
  }

  /**
   * One sync of `active`; never throws. `write` false (a cluster node that does not lead): the
   * upstream is fetched and published in memory like on the leader, so every node generates the
   * same provider document, but the resources are left to the leader's writes, which arrive here
   * through the cluster.
   */
  async run(active: ActiveSource, signal: AbortSignal, write = true): Promise<SyncReport> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    await this.useSource(active);
    const fetched =
      active.source.type === 'pangolin'
        ? await this.fetchPangolin(active, signal)
        : await this.fetchTraefik(active, signal);
    const at = this.deps.now().toISOString();
    if ('error' in fetched) {
      this.deps.upstream.recordSync(active.name, {
        at,
        ok: false,
        error: fetched.error,
        routers: null,
        empty_streak: this.emptyStreak,
      });
      this.failures.failed(active.name, fetched.error, at);
      return { ok: false, error: fetched.error, changed: false, duration_ms: elapsed(), routers: null, written: 0 };
    }
    if (!write) {
      this.failures.succeeded(active.name);
      const published = await this.publish(active, fetched, at);
      this.recordOk(active.name, at, fetched.routerCount);
      const routers = fetched.routerCount;
      return { ok: true, error: null, changed: published, duration_ms: elapsed(), routers, written: 0 };
    }
    // the snapshot is published as soon as the new records are in memory: the provider config
    // follows at once while the resource files are written (a first sync writes every one)
    let published = false;
    const applied = await applyRouters(this.deps.repository, fetched.routers, {
      source: active.source.type,
      exclude: this.deps.discovery.exclude,
      emptyConfirmations: this.deps.discovery.empty_confirmations,
      emptyStreak: this.emptyStreak,
      lastWasNonEmpty: this.lastWasNonEmpty,
      now: at,
      isOwnRouter: this.ownRouterMatcher(active.source.type),
      onStaged: async () => {
        published = await this.publish(active, fetched, at);
      },
      signal,
    });
    this.emptyStreak = applied.emptyStreak;
    this.failures.succeeded(active.name);
    if (applied.applied) this.lastWasNonEmpty = applied.emptyStreak === 0;
    this.recordOk(active.name, at, fetched.routerCount);
    this.logResult(active, fetched, applied, published, elapsed());
    return {
      ok: true,
      error: null,
      changed: applied.written > 0 || published,
      duration_ms: elapsed(),
      routers: fetched.routerCount,
      written: applied.written,
    };
  }

  private async fetchPangolin(active: ActiveSource, signal: AbortSignal): Promise<Fetched | { error: string }> {
    const result = await fetchPangolinConfig(active.source, { signal });
    if (!result.ok) return { error: result.error };
    const routers = routersFromPangolin(result.body);
    const services = discoveredServicesFrom(servicesFromPangolin(result.body), { takenIds: this.deps.ownServiceIds() });
    return {
      routers,
      routerCount: routers.length,
      hash: result.hash,
      body: result.body,
      text: result.text,
      services,
      traefikRouters: null,
    };
  }

  private async fetchTraefik(active: ActiveSource, signal: AbortSignal): Promise<Fetched | { error: string }> {
    const [routers, services] = await Promise.all([
      fetchTraefikRouters(active.source, { signal }),
      fetchTraefikServices(active.source, { signal }),
    ]);
    if (!routers.ok) return { error: routers.error };
    if (!services.ok) return { error: services.error };
    const isOwn = this.ownRouterMatcher('traefik');
    // our own routers change with our overrides: leaving them out keeps the hash (and G1) quiet
    const list = routers.items.filter((item) => typeof item.name !== 'string' || !isOwn(item.name));
    const ownServiceIds = this.deps.ownServiceIds();
    const discovered = discoveredServicesFrom(servicesFromTraefik(services), {
      isOwnService: ownObjectMatcher(ownServiceIds),
      takenIds: ownServiceIds,
    });
    const parsed = routersFromTraefik(list);
    return {
      routers: parsed,
      routerCount: routers.items.length,
      hash: sha256(stringifyCanonical(list)),
      body: null,
      text: null,
      services: discovered,
      traefikRouters: list,
    };
  }

  /**
   * Routers Stack Manager emits itself: names holding `_` (never in a user id or a Pangolin key),
   * and in Traefik mode `<resource id>@http`; a router some resource is built on is never ours.
   */
  private ownRouterMatcher(mode: 'pangolin' | 'traefik'): (key: string) => boolean {
    if (mode === 'pangolin') return (key) => splitKey(key).name.includes('_');
    const records = this.deps.repository.records();
    const matcher = ownObjectMatcher(records.map((r) => r.id));
    // an own resource's router `<id>@http` is ours, whatever its record says
    const upstreamKeys = new Set(records.filter((r) => r.source !== 'local').map((r) => r.router));
    return (key) => !upstreamKeys.has(key) && matcher(key);
  }

  /** Publishes the snapshot when the body or the discovered services changed; caches a new Pangolin body. */
  private async publish(active: ActiveSource, fetched: Fetched, at: string): Promise<boolean> {
    this.routerList = fetched.traefikRouters;
    if (fetched.text !== null && fetched.hash !== this.cachedHash) {
      try {
        await this.deps.store.writeRaw(cachePath(active.name), fetched.text);
        this.cachedHash = fetched.hash;
      } catch (err) {
        this.deps.log.warn({ err, source: active.name }, 'could not cache the upstream body');
      }
    }
    const current = this.deps.upstream.current();
    const sameSnapshot =
      current !== null &&
      current.source === active.name &&
      current.mode === active.source.type &&
      current.hash === fetched.hash;
    const sameServices =
      stringifyCanonical(this.deps.upstream.discoveredServices()) === stringifyCanonical(fetched.services);
    if (sameSnapshot && sameServices) return false;
    this.deps.upstream.update(
      { mode: active.source.type, source: active.name, body: fetched.body, hash: fetched.hash, fetched_at: at },
      fetched.services,
    );
    return true;
  }

  /** A successful fetch, for the status's `upstream` (the failure form is recorded where it happens). */
  private recordOk(source: string, at: string, routers: number): void {
    this.deps.upstream.recordSync(source, { at, ok: true, error: null, routers, empty_streak: this.emptyStreak });
  }

  private logResult(
    active: ActiveSource,
    fetched: Fetched,
    applied: ApplyResult,
    published: boolean,
    durationMs: number,
  ): void {
    const { log } = this.deps;
    if (applied.heldBack) {
      log.warn(
        { source: active.name, empty_streak: this.emptyStreak, confirmations: this.deps.discovery.empty_confirmations },
        'upstream answered with no routers after a non-empty answer; nothing changed until the empty answer is confirmed',
      );
    }
    const { created, updated, disabled, reactivated } = applied;
    if (created.length + updated.length + disabled.length + reactivated.length > 0 || published) {
      log.info(
        { source: active.name, created, reactivated, disabled, updated, snapshot_published: published },
        'discovery applied upstream changes',
      );
    }
    log.debug(
      {
        source: active.name,
        routers: fetched.routers.length,
        services: fetched.services.length,
        written: applied.written,
        duration_ms: durationMs,
      },
      'discovery sync done',
    );
  }
}
