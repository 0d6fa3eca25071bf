/** Polling for tests that wait on a watcher, a timer or a background sync: no fixed sleeps. */

/**
 * How long any condition may take before a test fails. CI runs on a busy 2-core machine: a hand
 * edit that is served in 10 ms on an idle one may take seconds there. A wait is for a condition,
 * bounded only by a deadline near the suite's own timeout (ava `timeout` in package.json: 5 min),
 * never by a tight wall-clock budget (issue 12 item 7).
 */
export const WAIT_DEADLINE_MS = 120_000;

/**
 * Polls `probe` every `intervalMs` until it returns a truthy value, which it then returns; throws
 * once the deadline has passed. `expectedMs` is how long the event takes on an idle machine
 * (documentation, and the floor of the deadline); the deadline is at least WAIT_DEADLINE_MS.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  expectedMs: number,
  intervalMs = 10,
): Promise<NonNullable<T>> {
  const timeoutMs = Math.max(expectedMs, WAIT_DEADLINE_MS);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
