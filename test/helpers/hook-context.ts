/**
 * One stack per test file: AVA forbids `t.teardown()` in hooks, so helpers that register their
 * cleanup on `t` (startStack, startTraefik, build) cannot run in `test.before`. `hookTeardowns`
 * hands the hook a context whose `teardown` collects the cleanups and runs them, last first, in
 * `test.after.always`.
 */
import type { ExecutionContext, TestFn } from 'ava';

/** Call at module level (it declares the `after.always` hook); `context(t)` inside `test.before`. */
export function hookTeardowns<Context>(test: TestFn<Context>): { context(t: ExecutionContext): ExecutionContext } {
  const teardowns: Array<() => unknown> = [];
  test.after.always(async () => {
    for (const teardown of teardowns.splice(0).reverse()) await teardown();
  });
  return {
    context(t) {
      return new Proxy(t, {
        get(target, key) {
          if (key === 'teardown') return (teardown: () => unknown) => void teardowns.push(teardown);
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === 'function' ? (...args: unknown[]) => value.apply(target, args) : value;
        },
      });
    },
  };
}
