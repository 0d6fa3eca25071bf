/**
 * `stackmanager_http_requests_total{route,method,status}` and
 * `stackmanager_http_request_duration_seconds` (API.md §4.22), counted in one onResponse hook. The
 * route label is Fastify's route pattern (`/api/resources/:id`), never the URL; a request no route
 * matched is `unmatched`. Per request: three Map lookups, two additions and a bucket scan; nothing is
 * allocated once a (route, method, status) has been seen. The provider's fast route (core/fast-routes.ts)
 * never reaches Fastify: its polls are counted by `stackmanager_provider_polls_total`.
 */
import { FlatHistogram, type Sample } from './series.ts';

export const UNMATCHED_ROUTE = 'unmatched';

/** Request durations, seconds: from a cached provider answer (~0.1 ms) to a slow backup (tens of s). */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** count holder: a number in an object, so the hot path increments it in place */
interface Count {
  value: number;
}

export class HttpRequestCounts {
  /** route → method → status → count */
  private readonly counts = new Map<string, Map<string, Map<number, Count>>>();
  readonly durations = new FlatHistogram(DURATION_BUCKETS);

  /** One answered request: route pattern (undefined: no route matched), method, status, duration in ms. */
  record(route: string | undefined, method: string, status: number, elapsedMs: number): void {
    const key = route ?? UNMATCHED_ROUTE;
    let methods = this.counts.get(key);
    if (methods === undefined) this.counts.set(key, (methods = new Map()));
    let statuses = methods.get(method);
    if (statuses === undefined) methods.set(method, (statuses = new Map()));
    const count = statuses.get(status);
    if (count === undefined) statuses.set(status, { value: 1 });
    else count.value += 1;
    this.durations.observe(elapsedMs / 1000);
  }

  samples(): Sample[] {
    const out: Sample[] = [];
    for (const [route, methods] of this.counts)
      for (const [method, statuses] of methods)
        for (const [status, count] of statuses) out.push({ labels: { route, method, status }, value: count.value });
    return out;
  }
}
