/**
 * The certificate expiry check (API.md §4.21 `certs`, §4.22): every `certs.check_interval_s` it reads
 * Traefik's metrics and acme.json, keeps each CN's notAfter for
 * `stackmanager_certificate_not_after_timestamp_seconds{cn}`, and publishes a `certificate` event
 * `{cn, not_after, days_left, threshold, source}` the first time a certificate is within 14, 3 or 0
 * days (once per threshold per certificate, remembered across restarts and leader changes:
 * cert-notices.ts). A source
 * that fails is logged and skipped; the other one still counts.
 */
import type { Sample } from './series.ts';
import { readAcmeFile, readTraefikMetrics, type CertificateReading, type CertificateSource } from './cert-sources.ts';
import { CertificateNotices, thresholdFor, type NoticeStore, type ThresholdDays } from './cert-notices.ts';

/** Time allowed for one read of Traefik's metrics page. */
export const METRICS_READ_TIMEOUT_MS = 10_000;

/** The `certificate` event's data (§4.17, §4.21). */
export interface CertificateEvent {
  cn: string;
  not_after: string;
  days_left: number;
  threshold: ThresholdDays;
  source: CertificateSource;
}

/** One certificate as the last check saw it. */
export interface CertificateView {
  cn: string;
  not_after: string;
  days_left: number;
  source: CertificateSource;
  /** metrics: Traefik's `sans` label */
  sans?: string[];
  /** acme: the resolver holding it */
  resolver?: string;
  /** acme: `domain.main` and `domain.sans` */
  domains?: string[];
}

/** How one configured source fared in the last check. */
export interface CertificateSourceStatus {
  source: CertificateSource;
  url_or_path: string;
  ok: boolean;
  /** null when ok */
  error: string | null;
}

/** The last check: when it ended, its sources and certificates (GET /api/certificates). */
export interface CertificateReport {
  /** null before the first check ended */
  checked_at: string | null;
  sources: CertificateSourceStatus[];
  certificates: CertificateView[];
}

interface Logger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface CertificateCheckOptions {
  /** Traefik's Prometheus endpoint; '' = not read */
  metricsUrl: string;
  /** acme.json; '' = not read */
  acmePath: string;
  intervalMs: number;
  /** Time allowed for one read of Traefik's metrics (default METRICS_READ_TIMEOUT_MS). */
  readTimeoutMs?: number;
  /** Where the record of announced thresholds is kept (the data store: replicated in cluster mode). */
  store: NoticeStore;
  now: () => Date;
  /** Only the cluster leader announces (every node fills the gauge). */
  announces: () => boolean;
  publish: (event: CertificateEvent) => void;
  log: Logger;
}

export class CertificateCheck {
  /** CN → the certificate reported with the latest notAfter (a renewed one replaces the old) */
  private certificates = new Map<string, CertificateReading>();
  private readonly notices: CertificateNotices;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** the running check is still reading its sources (a check() joins it) */
  private reading = false;
  /** the check queued behind a running one whose reads are done */
  private next: Promise<void> | null = null;
  private closed = false;
  /** aborts a read of Traefik's metrics in flight at close (shutdown does not wait for its timeout) */
  private readonly stopping = new AbortController();
  /** errors of the last check per source, logged when they change */
  private readonly lastErrors = new Map<CertificateSource, string>();
  /** sources of the last check that ended, and when it ended */
  private sourceStatus: CertificateSourceStatus[] = [];
  private checkedAt: string | null = null;

  constructor(private readonly options: CertificateCheckOptions) {
    this.notices = new CertificateNotices(options.store);
  }

  get enabled(): boolean {
    return this.options.metricsUrl !== '' || this.options.acmePath !== '';
  }

  /** Loads the notices, checks once, then every interval. */
  async start(): Promise<void> {
    if (!this.enabled) return;
    await this.notices.load();
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.intervalMs);
    this.timer.unref();
  }

  /** One check now (or the one running); never rejects. */
  check(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running && !this.reading) {
      // the running check has read its sources already: one more follows it, shared by every caller meanwhile
      this.next ??= this.running.then(() => {
        this.next = null;
        return this.check();
      });
      return this.next;
    }
    this.running ??= this.run().finally(() => (this.running = null));
    return this.running;
  }

  list(): CertificateView[] {
    const nowMs = this.options.now().getTime();
    return [...this.certificates.values()]
      .sort((a, b) => a.notAfter - b.notAfter || a.cn.localeCompare(b.cn))
      .map((reading) => ({
        cn: reading.cn,
        not_after: new Date(reading.notAfter * 1000).toISOString(),
        days_left: daysLeft(reading.notAfter, nowMs),
        source: reading.source,
        ...(reading.sans ? { sans: reading.sans } : {}),
        ...(reading.resolver !== undefined ? { resolver: reading.resolver } : {}),
        ...(reading.domains ? { domains: reading.domains } : {}),
      }));
  }

  /** The last check's time, sources and certificates. */
  report(): CertificateReport {
    return { checked_at: this.checkedAt, sources: this.sourceStatus, certificates: this.list() };
  }

  samples(): Sample[] {
    return [...this.certificates.values()].map((reading) => ({ labels: { cn: reading.cn }, value: reading.notAfter }));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.stopping.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const { metricsUrl, acmePath } = this.options;
    this.reading = true;
    const status: CertificateSourceStatus[] = [];
    const [fromMetrics, fromAcme] = await Promise.all([
      metricsUrl
        ? this.read('metrics', withoutUserInfo(metricsUrl), status, () =>
            readTraefikMetrics(metricsUrl, this.options.readTimeoutMs ?? METRICS_READ_TIMEOUT_MS, this.stopping.signal),
          )
        : [],
      acmePath ? this.read('acme', acmePath, status, () => readAcmeFile(acmePath)) : [],
    ]);
    this.reading = false;
    if (this.closed) return;
    this.sourceStatus = status.sort((a, b) => a.source.localeCompare(b.source)).reverse(); // metrics, acme
    this.checkedAt = this.options.now().toISOString();
    const latest = new Map<string, CertificateReading>();
    for (const reading of [...fromMetrics, ...fromAcme]) {
      const known = latest.get(reading.cn);
      if (!known || reading.notAfter > known.notAfter) latest.set(reading.cn, reading);
    }
    this.certificates = latest;
    await this.announce([...latest.values()]);
  }

  /** Readings of one source, or [] (logged once per new error) when it fails. */
  private async read(
    source: CertificateSource,
    where: string,
    status: CertificateSourceStatus[],
    read: () => Promise<CertificateReading[]>,
  ) {
    try {
      const readings = await read();
      status.push({ source, url_or_path: where, ok: true, error: null });
      if (this.lastErrors.delete(source)) this.options.log.info({ source }, 'certificate source readable again');
      return readings;
    } catch (err) {
      if (this.closed) return [];
      const message = (err as Error).message;
      // the metrics URL's user info (if any) is not shown
      const shown = source === 'metrics' ? message.replaceAll(this.options.metricsUrl, where) : message;
      status.push({ source, url_or_path: where, ok: false, error: shown });
      if (this.lastErrors.get(source) !== message)
        this.options.log.warn({ source, error: message }, 'certificate source not readable; checked again later');
      this.lastErrors.set(source, message);
      return [];
    }
  }

  private async announce(readings: CertificateReading[]): Promise<void> {
    if (!this.options.announces()) return;
    // another node may have led (and announced) since this one last did: its record counts too
    await this.notices.reload();
    const nowMs = this.options.now().getTime();
    let changed = false;
    for (const reading of readings) {
      const left = daysLeft(reading.notAfter, nowMs);
      const threshold = thresholdFor(left);
      if (threshold === null || this.notices.announced(reading.cn, reading.notAfter, threshold)) continue;
      this.notices.record(reading.cn, reading.notAfter, threshold);
      changed = true;
      this.options.publish({
        cn: reading.cn,
        not_after: new Date(reading.notAfter * 1000).toISOString(),
        days_left: left,
        threshold,
        source: reading.source,
      });
    }
    if (changed)
      await this.notices
        .save(Math.floor(nowMs / 1000))
        .catch((err: Error) =>
          this.options.log.warn(
            { error: err.message },
            'certificate notices not saved; a restart or another leader may repeat them',
          ),
        );
  }
}

/** `url` without a user name or password (shown in GET /api/certificates). */
function withoutUserInfo(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Whole days from `nowMs` to `notAfter` (unix seconds), rounded down: negative once expired. */
function daysLeft(notAfter: number, nowMs: number): number {
  return Math.floor((notAfter * 1000 - nowMs) / 86_400_000);
}
