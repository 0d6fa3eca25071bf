/** Aggregates access-log records into the Stats object of API.md §4.13. */
import type { StatsView } from './schemas.ts';
import { ByteCounter } from './byte-counter.ts';
import { LatencyQuantiles } from './latency-quantiles.ts';
import { type LineFields, Text } from './line-fields.ts';

/** API.md §4.13: `requests_per_minute` covers at most the last 1440 minutes. */
const MINUTES_KEPT = 1440;

const sortedObject = (counter: Map<string, number>): Record<string, number> =>
  Object.fromEntries([...counter].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));

export class AccessLogStats {
  linesRead = 0;
  linesSkipped = 0;
  private requests = 0;
  private readonly formats = new Set<'json' | 'clf'>();
  private from: number | null = null;
  private to: number | null = null;
  /** Per status code 0–999 (every real one): an array add instead of a string key and a Map lookup per line. */
  private readonly commonCodes = new Float64Array(1000);
  /** Any other integer status a JSON line may carry. */
  private readonly otherCodes = new ByteCounter();
  private readonly methods = new ByteCounter();
  private readonly ips = new ByteCounter();
  private readonly hosts = new ByteCounter();
  private readonly paths = new ByteCounter();
  private readonly routers = new ByteCounter();
  private readonly services = new ByteCounter();
  private readonly minutes: Map<number, number> = new Map();
  /** Lines come in time order: a run of requests in one minute is added to `minutes` once. */
  private runMinute = Number.NaN;
  private runCount = 0;
  private readonly latencies = new LatencyQuantiles();
  private bytesSent = 0;

  /** One non-empty line that did not parse. */
  skip(): void {
    this.linesSkipped++;
  }

  /** One parsed line, inside the window or not: `format` describes the lines read. */
  parsed(format: 'json' | 'clf'): void {
    this.formats.add(format);
  }

  /** One parsed request inside the window. */
  add(line: LineFields): void {
    this.requests++;
    if (this.from === null || line.ms < this.from) this.from = line.ms;
    if (this.to === null || line.ms > this.to) this.to = line.ms;
    const status = line.status;
    if (status >= 0 && status < 1000) this.commonCodes[status]++;
    else this.otherCodes.bump(String(status));
    this.count(this.methods, line, Text.Method);
    this.count(this.ips, line, Text.Ip);
    this.count(this.hosts, line, Text.Host);
    this.count(this.paths, line, Text.Path);
    this.count(this.routers, line, Text.Router);
    this.count(this.services, line, Text.Service);
    const minute = Math.floor(line.ms / 60_000);
    if (minute === this.runMinute) {
      this.runCount++;
    } else {
      this.flushMinute();
      this.runMinute = minute;
      this.runCount = 1;
    }
    if (line.latencyMs !== null) this.latencies.add(line.latencyMs);
    this.bytesSent += line.bytes;
  }

  private count(counter: ByteCounter, line: LineFields, field: Text): void {
    const start = line.starts[field];
    if (start >= 0) counter.bumpBytes(line.b, start, line.ends[field]);
    else counter.bump(line.strings[field]);
  }

  private flushMinute(): void {
    if (this.runCount === 0) return;
    this.minutes.set(this.runMinute, (this.minutes.get(this.runMinute) ?? 0) + this.runCount);
    this.runCount = 0;
  }

  /** Status codes and classes as counters, in the same shape for common and other codes. */
  private statusCounters(): { classes: Map<string, number>; codes: Map<string, number> } {
    const classes = new Map(['1xx', '2xx', '3xx', '4xx', '5xx'].map((c) => [c, 0]));
    const codes = new Map(this.otherCodes.entries());
    this.commonCodes.forEach((count, status) => {
      if (count > 0) codes.set(String(status), count);
    });
    for (const [code, count] of codes) {
      const klass = `${Math.floor(Number(code) / 100)}xx`;
      if (classes.has(klass)) classes.set(klass, classes.get(klass)! + count);
    }
    return { classes, codes };
  }

  /** The Stats body; `source` names the file or container read. */
  result(source: string, top: number): StatsView {
    this.flushMinute();
    const { classes, codes } = this.statusCounters();
    const [p50, p90, p95, p99] = this.latencies.percentiles([50, 90, 95, 99]);
    const errors = (classes.get('4xx') ?? 0) + (classes.get('5xx') ?? 0);
    const lastMinute = this.to === null ? 0 : Math.floor(this.to / 60_000);
    const perMinute = [...this.minutes]
      .filter(([minute]) => minute > lastMinute - MINUTES_KEPT)
      .sort((a, b) => a[0] - b[0]);
    return {
      source,
      format:
        this.formats.size === 2 ? 'mixed' : this.formats.has('clf') ? 'clf' : this.formats.has('json') ? 'json' : null,
      lines_read: this.linesRead,
      lines_skipped: this.linesSkipped,
      from: this.from === null ? null : new Date(this.from).toISOString(),
      to: this.to === null ? null : new Date(this.to).toISOString(),
      requests: this.requests,
      status_classes: sortedObject(classes),
      status_codes: sortedObject(codes),
      methods: sortedObject(new Map(this.methods.entries())),
      top_ips: this.ips.top(top),
      top_hosts: this.hosts.top(top),
      top_paths: this.paths.top(top),
      top_routers: this.routers.top(top),
      top_services: this.services.top(top),
      latency_ms: { p50, p90, p95, p99, max: this.latencies.max },
      bytes_sent: this.bytesSent,
      error_rate: this.requests === 0 ? 0 : errors / this.requests,
      requests_per_minute: perMinute.map(([minute, count]) => ({
        minute: new Date(minute * 60_000).toISOString(),
        count,
      })),
    };
  }
}
