/** Bounded concurrency for I/O-bound work over many items (store scans, batch writes, imports). */

/**
 * Runs `fn` over `items` with at most `limit` calls in flight; resolves with the results in input
 * order. A rejection stops new calls and rejects once the calls in flight have settled.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const rejected = settled.find((s) => s.status === 'rejected');
  if (rejected) throw (rejected as PromiseRejectedResult).reason;
  return results;
}
