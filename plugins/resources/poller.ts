/**
 * The discovery loop (API.md §4.4): a sync at startup, every `poll_interval_s` of the active
 * source, when the data sources change and on request (`app.upstream.requestSync`). Syncs never
 * overlap; requests made while one is queued share it.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SyncOutcome } from '../../model/upstream-state.ts';
import type { ActiveDataSource as ActiveSource, DataSourceRegistry } from '../datasource/index.ts';
import type { DiscoverySync, SyncReport } from './sync.ts';
import { backoffDelayMs } from './failure-streak.ts';

/** `drift`: a hand edit changed discovered fields; the upstream's values are written back at once. */
export type SyncReason = 'startup' | 'interval' | 'forced' | 'source_changed' | 'drift';

const NOT_RUNNING: SyncReport = {
  ok: false,
  error: 'discovery is stopped',
  changed: false,
  duration_ms: 0,
  routers: null,
  written: 0,
};
const NO_SOURCE: SyncReport = {
  ok: false,
  error: 'no active data source',
  changed: false,
  duration_ms: 0,
  routers: null,
  written: 0,
};

/** A sync report in the shape of the datasource contract. */
export const toOutcome = (report: SyncReport): SyncOutcome => ({
  ok: report.ok,
  error: report.error,
  changed: report.changed,
});

export class DiscoveryPoller {
  private tail: Promise<unknown> = Promise.resolve();
  private queued: Promise<SyncReport> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly abort = new AbortController();
  private closed = false;
  private startup: Promise<SyncReport> | null = null;
  private unsubscribe: (() => void) | null = null;
  private activeKey: string | null = null;

  constructor(
    private readonly sync: DiscoverySync,
    private readonly sources: Pick<DataSourceRegistry, 'active' | 'onChange'>,
    private readonly log: FastifyBaseLogger,
    /** Cluster mode: only the leader writes what a sync discovered; the others fetch and publish only (sync.ts). */
    private readonly leading: () => boolean = () => true,
  ) {}

  /** Starts the loop: the startup sync (not awaited here), the timer, the data source subscription. */
  start(): void {
    this.activeKey = keyOf(this.sources.active());
    this.unsubscribe = this.sources.onChange(() => this.sourcesChanged());
    this.startup = this.request('startup');
    this.arm();
  }

  /** Resolves with the startup sync's report (immediately if the loop never started). */
  started(): Promise<SyncReport> {
    return this.startup ?? Promise.resolve(NOT_RUNNING);
  }

  /** Queues a sync; callers arriving while one is queued (not yet running) share it. */
  request(reason: SyncReason): Promise<SyncReport> {
    if (this.closed) return Promise.resolve(NOT_RUNNING);
    if (this.queued) return this.queued;
    const run = this.tail.then(() => {
      this.queued = null;
      return this.runOnce(reason);
    });
    this.queued = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer, aborts a running fetch and waits for the running sync to finish. */
  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    this.abort.abort();
    await this.tail;
  }

  private async runOnce(reason: SyncReason): Promise<SyncReport> {
    if (this.closed) return NOT_RUNNING;
    const active = this.sources.active();
    if (!active) {
      await this.sync.useSource(null);
      return NO_SOURCE;
    }
    try {
      // another node leads: its sync writes reach this node through the cluster; a forced sync writes anywhere
      const report = await this.sync.run(active, this.abort.signal, reason === 'forced' || this.leading());
      this.log.debug({ reason, ok: report.ok, duration_ms: report.duration_ms }, 'discovery sync finished');
      return report;
    } catch (err) {
      // sync.run reports upstream failures itself; this is a bug or a store failure (disk full)
      this.log.error({ err, reason }, 'discovery sync failed');
      return { ...NO_SOURCE, error: `discovery failed: ${(err as Error).message}` };
    }
  }

  /** (Re)arms the interval timer from the active source's poll interval. */
  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const active = this.sources.active();
    if (this.closed || !active) return;
    // a timeout chain, not setInterval: a slow upstream never stacks syncs up; a failing one is
    // polled less often (up to 12 intervals apart) until it answers again
    const delay = backoffDelayMs(active.source.poll_interval_s * 1000, this.sync.failureStreak);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.request('interval').finally(() => {
        if (!this.timer) this.arm();
      });
    }, delay);
    this.timer.unref();
  }

  private sourcesChanged(): void {
    const key = keyOf(this.sources.active());
    this.arm();
    if (key !== this.activeKey) {
      this.activeKey = key;
      void this.request('source_changed');
    }
  }
}

/** What makes a different upstream: name, type, URL and credentials (not the poll interval). */
function keyOf(active: ActiveSource | null): string | null {
  if (!active) return null;
  const { type, url, skip_tls_verify, basic_auth } = active.source;
  return JSON.stringify([
    active.name,
    type,
    url,
    skip_tls_verify,
    basic_auth?.username ?? null,
    basic_auth?.password ?? null,
  ]);
}
