/** Polling for tests that wait on a watcher, a timer or a background sync: no fixed sleeps. */

/**
 * Polls `probe` every `intervalMs` until it returns a truthy value, which it then returns; throws
 * once `timeoutMs` has passed. No default deadline: each caller says how long its event may take.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, timeoutMs: number, intervalMs = 10): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
