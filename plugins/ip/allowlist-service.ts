/**
 * Our CrowdSec allowlist (API.md §4.23): entries in `data/crowdsec/allowlist.yaml`; an active entry
 * removes the decisions it covers at once and on every sweep of the decisions stream, and expired
 * entries leave the file by themselves.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { StoreDocument } from '../../core/store/types.ts';
import { filled, isActive, type AllowlistFile, type Entry } from './allowlist-file.ts';
import type { CrowdSecClient, LapiDecision } from './crowdsec-client.ts';
import type { AllowlistCreateBody, AllowlistCreatedView } from './decision-schemas.ts';
import { CONTROL, checkDuration, toManaged, upstream } from './decisions-service.ts';
import { ipErrors } from './errors.ts';
import { goDurationMs } from './go-duration.ts';
import { contains, overlaps, parseTarget, type Target } from './ip-range.ts';
import type { ErrorDetail } from '../../core/errors/app-error.ts';

/** Every this many sweeps the stream is read from the start (a safety net for LAPI's pull point). */
const FULL_SWEEP_EVERY = 30;

export interface AllowlistServiceOptions {
  document: StoreDocument<AllowlistFile>;
  crowdsec: CrowdSecClient;
  effectiveWithinS: () => number | null;
  now: () => Date;
  log: FastifyBaseLogger;
}

export interface SweepResult {
  expired: number;
  removed: number;
}

export class AllowlistService {
  /** Read the whole stream on the next sweep (start, after a failure, after a pause without entries). */
  private fullNext = true;
  private sweeps = 0;
  private running: Promise<SweepResult> | null = null;
  private mirrorChecked = false;
  /** The active values the previous sweep looked for: another set (a hand edit) reads the whole stream. */
  private lastValues = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AllowlistServiceOptions) {}

  /** Active entries, by id; an expired one is gone from this list at once, from the file at the next sweep. */
  entries(): Entry[] {
    const now = this.options.now().getTime();
    const fallback = new Date(now).toISOString();
    return this.options.document
      .get()
      .entries.filter((e) => isActive(e, now))
      .map((e) => filled(e, fallback))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Active entries whose target overlaps `target` (a manual ban on them is refused). */
  overlapping(target: Target): Entry[] {
    return this.entries().filter((e) => {
      const own = parseTarget(e.value);
      return !('error' in own) && overlaps(own, target);
    });
  }

  async create(body: AllowlistCreateBody, actor: string): Promise<AllowlistCreatedView> {
    const details: ErrorDetail[] = [];
    const target = parseTarget(body.value);
    if ('error' in target) details.push({ path: '/value', message: target.error });
    const ttl = body.ttl ?? null;
    const ttlError = ttl === null ? null : checkDuration(ttl);
    if (ttlError) details.push({ path: '/ttl', message: ttlError });
    const reason = body.reason?.trim() ?? '';
    if (CONTROL.test(reason)) details.push({ path: '/reason', message: 'must not contain control characters' });
    if (details.length > 0 || 'error' in target) throw ipErrors.validation(details);

    const { crowdsec } = this.options;
    const configured = crowdsec.hasBouncer() && crowdsec.hasMachine();
    // read LAPI before writing: when it is down the answer is 502 and nothing is stored
    // LAPI's contains=false lists what lies inside the address or range; checked again here
    const inside = { [target.scope === 'Ip' ? 'ip' : 'range']: target.value, contains: 'false' as const };
    const covered = configured
      ? (await upstream(() => crowdsec.listDecisions(inside))).filter((d) => coveredBy([target], d) >= 0)
      : [];
    const now = this.options.now();
    const entry: Entry = {
      id: `al-${randomBytes(5).toString('hex')}`,
      value: target.value,
      reason,
      expires_at: ttl === null ? null : new Date(now.getTime() + (goDurationMs(ttl) ?? 0)).toISOString(),
      created_by: actor,
      created_at: now.toISOString(),
      removed_decisions: 0,
    };
    await this.options.document.update((file) => ({ entries: [...file.entries, entry] }));
    const removed = await this.remove(covered);
    if (removed.length > 0) await this.count(new Map([[entry.id, removed.length]]));
    this.options.log.info({ id: entry.id, value: entry.value, removed: removed.length }, 'allowlist entry added');
    return {
      ...entry,
      removed_decisions: removed.length,
      removed: removed.map((d) => toManaged(d, now.getTime())),
      effective_within_s: this.options.effectiveWithinS(),
    };
  }

  async delete(id: string): Promise<void> {
    if (!this.entries().some((e) => e.id === id)) throw ipErrors.allowlistNotFound(id);
    await this.options.document.update((file) => ({ entries: file.entries.filter((e) => e.id !== id) }));
  }

  /** Sweeps every `intervalMs` until stop(); a LAPI that stays down is logged once, and its return. */
  start(intervalMs: number): void {
    let failing = false;
    this.timer = setInterval(() => {
      this.sweep().then(
        () => {
          if (failing) this.options.log.info('allowlist sweep works again');
          failing = false;
        },
        (err: Error) => {
          if (failing) return this.options.log.debug({ err: err.message }, 'allowlist sweep failed again');
          failing = true;
          this.options.log.warn({ err: err.message }, 'allowlist sweep failed');
        },
      );
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One sweep at a time; a caller during a sweep gets that sweep's result. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.sweepOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async sweepOnce(): Promise<SweepResult> {
    const now = this.options.now().getTime();
    const expired = this.options.document.get().entries.filter((e) => !isActive(e, now)).length;
    if (expired > 0) {
      await this.options.document.update((file) => {
        const kept = file.entries.filter((e) => isActive(e, now));
        return kept.length === file.entries.length ? undefined : { entries: kept };
      });
      this.options.log.info({ expired }, 'expired allowlist entries removed');
    }
    const entries = this.entries();
    const { crowdsec } = this.options;
    if (entries.length === 0 || !crowdsec.hasBouncer() || !crowdsec.hasMachine()) {
      // the stream's pull point moves on without us: start from the whole list next time
      this.fullNext = true;
      return { expired, removed: 0 };
    }
    await this.checkMirror();
    // decisions the stream already gave us are not new again: an entry added by hand needs the whole list
    const values = entries
      .map((e) => e.value)
      .sort()
      .join(',');
    const full = this.fullNext || values !== this.lastValues || this.sweeps % FULL_SWEEP_EVERY === 0;
    this.lastValues = values;
    this.sweeps += 1;
    let fresh: LapiDecision[];
    try {
      fresh = (await crowdsec.stream(full)).new;
      this.fullNext = false;
    } catch (err) {
      this.fullNext = true;
      throw err;
    }
    const pairs = entries.flatMap((e) => {
      const target = parseTarget(e.value);
      return 'error' in target ? [] : [{ id: e.id, target }];
    });
    const targets = pairs.map((p) => p.target);
    const perEntry = new Map<string, number>();
    const matching = fresh.filter((d) => {
      const index = coveredBy(targets, d);
      if (index < 0) return false;
      const { id } = pairs[index];
      perEntry.set(id, (perEntry.get(id) ?? 0) + 1);
      return true;
    });
    const removed = await this.remove(matching);
    if (removed.length > 0) {
      await this.count(perEntry);
      this.options.log.info({ removed: removed.length }, 'allowlist sweep removed decisions');
    }
    return { expired, removed: removed.length };
  }

  /** Deletes each decision (machine JWT); one that fails stays for the next sweep. */
  private async remove(decisions: LapiDecision[]): Promise<LapiDecision[]> {
    const removed: LapiDecision[] = [];
    for (const d of decisions) {
      try {
        await this.options.crowdsec.deleteDecision(d.id);
        removed.push(d);
      } catch (err) {
        this.fullNext = true;
        this.options.log.warn(
          { id: d.id, value: d.value, err: (err as Error).message },
          'allowlist: decision not removed',
        );
      }
    }
    return removed;
  }

  private async count(perEntry: Map<string, number>): Promise<void> {
    await this.options.document.update((file) => ({
      entries: file.entries.map((e) =>
        perEntry.has(e.id) ? { ...e, removed_decisions: (e.removed_decisions ?? 0) + (perEntry.get(e.id) ?? 0) } : e,
      ),
    }));
  }

  /**
   * CrowdSec ≥ 1.6.8 has allowlists, but its LAPI only reads them (GET /v1/allowlists, /check):
   * they are written by cscli on the LAPI's host. Logged once so the operator knows the entries are
   * enforced by this sweep, not mirrored.
   */
  private async checkMirror(): Promise<void> {
    if (this.mirrorChecked) return;
    this.mirrorChecked = true;
    try {
      if (await this.options.crowdsec.hasAllowlists())
        this.options.log.info(
          'CrowdSec LAPI has allowlists (read-only over HTTP): entries are enforced by the sweep, not mirrored into "stack-manager"',
        );
    } catch {
      this.mirrorChecked = false;
    }
  }
}

/** Index of the first target that contains the decision's address or range; -1 when none does. */
function coveredBy(targets: Target[], d: LapiDecision): number {
  const own = parseTarget(String(d.value ?? ''));
  if ('error' in own) return -1;
  return targets.findIndex((t) => contains(t, own));
}
