/**
 * prom-client's default process and Node metrics, one registry per process. They describe the
 * process, not an app instance, and what they start cannot be stopped (an event-loop delay monitor,
 * a GC PerformanceObserver holding its histogram): made per app, every hot reload (and every app a
 * test file builds) would leave one more of each running. So the first app that asks creates them
 * and every later one in the process shares them; each app's own series stay in its own registry.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

let shared: Registry | null = null;

/** The process-wide registry of the default metrics (created on first use). */
export function processMetrics(): Registry {
  if (shared === null) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
  }
  return shared;
}
