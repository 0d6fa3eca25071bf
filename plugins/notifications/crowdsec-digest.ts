/**
 * The CrowdSec digest (API.md §4.21 `security`): every `notifications.crowdsec_digest_s` the LAPI's
 * active decisions are read with the bouncer key (`GET /v1/decisions`, which keeps no per-bouncer
 * cursor, so the ip group's decisions stream is left alone); those with an id above the highest seen
 * are the period's new decisions, summed up per scenario and origin in one `info` message. The
 * first read only sets the mark: decisions older than the process are not news.
 */
import type { Notification } from './delivery.ts';

export interface DigestOptions {
  url: string;
  bouncerKey: string;
  timeoutMs: number;
  periodMs: number;
  userAgent: string;
  notify: (notification: Notification) => void;
  log: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

interface Decision {
  id: number;
  origin?: string;
  scenario?: string;
  type?: string;
  value?: string;
}

/** Values of a digest line: up to this many scenarios are named, the rest summed. */
const LISTED = 10;

export class CrowdSecDigest {
  private lastId: number | null = null;
  private nextAt: number | null = null;
  private running = false;
  private failing = false;

  constructor(private readonly options: DigestOptions) {}

  /** Called on every delivery tick; reads the LAPI when the period has passed (one read at a time). */
  tick(nowMs: number): void {
    if (this.running || (this.nextAt !== null && nowMs < this.nextAt)) return;
    // the first read sets the mark at once; the following ones come once per period
    this.nextAt = nowMs + this.options.periodMs;
    this.running = true;
    void this.read().finally(() => (this.running = false));
  }

  private async read(): Promise<void> {
    let decisions: Decision[];
    try {
      const response = await fetch(`${this.options.url.replace(/\/+$/, '')}/v1/decisions`, {
        headers: { 'x-api-key': this.options.bouncerKey, 'user-agent': this.options.userAgent },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      if (!response.ok) throw new Error(`CrowdSec LAPI answered HTTP ${response.status}`);
      const body = (await response.json()) as unknown;
      decisions = Array.isArray(body) ? (body as Decision[]) : [];
      if (this.failing) this.options.log.warn({}, 'CrowdSec digest: the LAPI answers again');
      this.failing = false;
    } catch (err) {
      // logged once per outage; the digest is informational, the health check reports CrowdSec down
      if (!this.failing)
        this.options.log.warn({ error: (err as Error).message }, 'CrowdSec digest: reading decisions failed');
      this.failing = true;
      return;
    }
    const highest = decisions.reduce((top, decision) => Math.max(top, decision.id), this.lastId ?? 0);
    const fresh = this.lastId === null ? [] : decisions.filter((decision) => decision.id > (this.lastId ?? 0));
    this.options.log.debug({ decisions: decisions.length, new: fresh.length, mark: highest }, 'CrowdSec digest: read');
    this.lastId = highest;
    if (fresh.length > 0) this.options.notify(summary(fresh, this.options.periodMs));
  }
}

function summary(decisions: Decision[], periodMs: number): Notification {
  const counts = new Map<string, number>();
  for (const decision of decisions) {
    const key = `${decision.scenario || 'unknown scenario'} (${decision.origin || 'unknown origin'})`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const lines = sorted.slice(0, LISTED).map(([key, count]) => `- ${key}: ${count}`);
  const rest = sorted.slice(LISTED).reduce((sum, [, count]) => sum + count, 0);
  if (rest > 0) lines.push(`- ${sorted.length - LISTED} other scenarios: ${rest}`);
  const minutes = Math.round(periodMs / 60_000);
  return {
    category: 'security',
    severity: 'info',
    title: `CrowdSec: ${decisions.length} new decision${decisions.length === 1 ? '' : 's'}`,
    body: `Decisions added in the last ${minutes >= 1 ? `${minutes} min` : `${Math.round(periodMs / 1000)} s`}, per scenario:\n${lines.join('\n')}`,
  };
}
