/**
 * Series whose values are read when Prometheus scrapes (API.md §4.22): each is an object prom-client's
 * Registry formats like its own metrics (it calls `get()` and writes the values in the text format,
 * escaping label values). Counters kept by other groups as plain numbers (poll counts, sync totals)
 * and gauges of their state (resources per live state) are read here, so nothing is recorded per
 * request or per event on their side beyond a number.
 */
import type { Metric, Registry } from 'prom-client';

export type Labels = Record<string, string | number>;

/** One line of a series: its labels and value; `metricName` for the `_bucket`/`_sum`/`_count` lines of a histogram. */
export interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

type SeriesType = 'counter' | 'gauge' | 'histogram';

/** A series prom-client's Registry formats (it only calls `get()` on it). */
export interface ScrapedSeries {
  name: string;
  help: string;
  type: SeriesType;
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: SeriesType; aggregator: 'sum'; values: Sample[] }>;
  reset(): void;
}

/** Registers a scraped series (prom-client's types name only its own classes; the Registry needs `get()`). */
export function register(registry: Registry, series: ScrapedSeries): void {
  registry.registerMetric(series as unknown as Metric);
}

/** A series whose samples `read` returns at scrape time. */
export function scraped(
  name: string,
  help: string,
  type: SeriesType,
  read: () => Sample[] | Promise<Sample[]>,
): ScrapedSeries {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    async get() {
      return { name, help, type, aggregator: 'sum', values: await read() };
    },
    reset() {},
  };
}

/**
 * A histogram without labels, observed on a hot path: a fixed bucket array, no allocation per
 * observation (prom-client's own Histogram hashes its labels on every observe).
 */
export class FlatHistogram {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    // non-cumulative here; cumulated when read
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i] += 1;
        return;
      }
    }
  }

  samples(name: string): Sample[] {
    const out: Sample[] = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i];
      out.push({ metricName: `${name}_bucket`, labels: { le: this.bounds[i] }, value: cumulative });
    }
    out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: this.count });
    out.push({ metricName: `${name}_sum`, labels: {}, value: this.sum });
    out.push({ metricName: `${name}_count`, labels: {}, value: this.count });
    return out;
  }
}
