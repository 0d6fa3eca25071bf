/**
 * Quiet, honest logging of a failing upstream: the first failure is a warning, the same failure
 * again is counted (debug), a different failure is a new warning carrying the previous count, and
 * the first success after failures says how many there were. The streak also drives the poll
 * back-off (`backoffDelayMs`).
 */
import type { FastifyBaseLogger } from 'fastify';

/** The longest wait between polls of a failing upstream, in poll intervals. */
export const MAX_BACKOFF_FACTOR = 12;

/**
 * Delay before the next poll after `streak` identical failures in a row: one interval after the
 * first, then doubling (2×, 4×, 8×) up to 12 intervals.
 */
export function backoffDelayMs(intervalMs: number, streak: number): number {
  if (streak <= 1) return intervalMs;
  return intervalMs * Math.min(2 ** (streak - 1), MAX_BACKOFF_FACTOR);
}

export class FailureStreak {
  private error: string | null = null;
  private count = 0;
  private since: string | null = null;

  constructor(private readonly log: FastifyBaseLogger) {}

  /** Identical failures in a row (0 after a success). */
  get streak(): number {
    return this.count;
  }

  /** Records a failed sync of `source`; logs only when the failure is new or different. */
  failed(source: string, error: string, at: string): void {
    if (error === this.error) {
      this.count++;
      this.log.debug(
        { source, error, count: this.count, since: this.since },
        'discovery sync failed again; nothing changed',
      );
      return;
    }
    const previous = this.error === null ? {} : { previous_error: this.error, previous_count: this.count };
    this.error = error;
    this.count = 1;
    this.since = at;
    this.log.warn(
      { source, error, count: 1, ...previous },
      'discovery sync failed; nothing changed (repeats of this error are counted, not logged, and polls back off)',
    );
  }

  /** Records a successful sync; logs the recovery when failures came before. */
  succeeded(source: string): void {
    if (this.error === null) return;
    this.log.info(
      { source, failed_syncs: this.count, error: this.error, since: this.since },
      `upstream reachable again after ${this.count} failed syncs`,
    );
    this.reset();
  }

  /** Forgets the streak (another source is now active). */
  reset(): void {
    this.error = null;
    this.count = 0;
    this.since = null;
  }
}
