/**
 * The pacing of repeated rebuilds (the provider's generations, the target documents): a rebuild
 * that took D ms is followed by the next one no sooner than D ms after it ended (at most 1 s), so
 * a long stream of changes (a first sync writing 10,000 resource files) costs at most half the CPU,
 * while a lone change after a quiet spell is rebuilt on the next turn.
 */
export class DutyCycle {
  private lastEnd = 0;
  private lastDurationMs = 0;

  /** When the last run ended (performance.now()). */
  get endedAt(): number {
    return this.lastEnd;
  }

  /**
   * Calls `next` once the pause owed to the last run is over: on the next turn, or after ≤ 1 s.
   * `unref`: the timer does not keep the process alive (for work nobody awaits).
   */
  schedule(next: () => void, options: { unref?: boolean } = {}): void {
    const wait = Math.min(this.lastEnd + this.lastDurationMs - performance.now(), 1000);
    if (wait < 1) setImmediate(next);
    else if (options.unref) setTimeout(next, wait).unref();
    else setTimeout(next, wait);
  }

  /** Runs `work` and remembers how long it took. */
  run<T>(work: () => T): T {
    const start = performance.now();
    try {
      return work();
    } finally {
      this.lastEnd = performance.now();
      this.lastDurationMs = this.lastEnd - start;
    }
  }
}
