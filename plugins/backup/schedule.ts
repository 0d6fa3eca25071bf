/** Scheduled backups (API.md §4.10 `backup.schedule`): an interval such as `24h`; empty = none. */
import { durationMs } from '../../model/duration.ts';

/** Node timers overflow above 2^31-1 ms (about 24.8 days); longer waits are taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Milliseconds of `^[0-9]+(s|m|h|d)$`; null for empty, zero or anything else (no schedule). */
export function parseInterval(text: string): number | null {
  const ms = durationMs(text.trim());
  return ms !== null && ms > 0 && Number.isSafeInteger(ms) ? ms : null;
}

export interface ScheduleClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): NodeJS.Timeout;
  clearTimeout(timer: NodeJS.Timeout): void;
}

const realClock: ScheduleClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer),
};

/**
 * Runs `run` every `intervalMs`, first one interval after the start; the next run is planned when
 * the previous one has finished, so runs never overlap. Timers are unref'd (they never keep the
 * process alive). Returns the function that stops it.
 */
export function startSchedule(
  intervalMs: number,
  run: () => Promise<void>,
  clock: ScheduleClock = realClock,
): () => void {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let due = clock.now() + intervalMs;
  const arm = () => {
    if (stopped) return;
    timer = clock.setTimeout(tick, Math.max(0, Math.min(due - clock.now(), MAX_TIMER_MS)));
    timer.unref?.();
  };
  const tick = () => {
    if (stopped) return;
    if (clock.now() < due) return arm(); // a step of a wait longer than one timer can hold
    void run()
      .catch(() => undefined)
      .then(() => {
        due += intervalMs;
        if (due <= clock.now()) due = clock.now() + intervalMs; // a run outlasted the interval: skip, never catch up
        arm();
      });
  };
  arm();
  return () => {
    stopped = true;
    if (timer) clock.clearTimeout(timer);
  };
}
