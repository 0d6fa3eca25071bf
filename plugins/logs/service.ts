/** The Logs domain (API.md §4.13): container log lines and access-log statistics. */
import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from '../../core/config/schema.ts';
import { isDockerHttpError, type DockerClient } from '../container/index.ts';
import { countLine } from './access-log-scan.ts';
import { ScanError, StatsRunner } from './stats-runner.ts';
import { AccessLogStats } from './access-log-stats.ts';
import type { LogLine } from './docker-logs.ts';
import { logErrors } from './errors.ts';
import type { StreamTarget } from './stream-session.ts';
import { readTail, type TailRequest } from './tail-read.ts';
import type { LinesQueryType, LogService, StatsQueryType, StatsView } from './schemas.ts';
import { parseWindow, type TimeWindow } from './time-range.ts';

export interface LogServiceOptions {
  docker: DockerClient;
  settings: AppConfig['logs'];
  now: () => Date;
  log: FastifyBaseLogger;
}

/** Without an access-log file, stats read the proxy container's last 24 h, at most 100000 lines. */
const FALLBACK_WINDOW_MS = 24 * 3_600_000;
const FALLBACK_MAX_LINES = 100_000;

export class LogsService {
  private readonly runner = new StatsRunner();

  constructor(private readonly options: LogServiceOptions) {}

  /** The last `tail` lines of a service's container within the window, oldest first. */
  async lines(service: LogService, query: LinesQueryType): Promise<LogLine[]> {
    const window = parseWindow(query, this.options.now());
    const stream = query.stream ?? 'all';
    const name = this.options.settings.services[service];
    const lines = await this.read(name, {
      tail: query.tail,
      window,
      stdout: stream !== 'stderr',
      stderr: stream !== 'stdout',
    });
    if (lines === null) throw logErrors.containerMissing(service, name);
    return lines;
  }

  /** The container a stream attaches to; 404 when missing, 502 when Docker fails (before the upgrade). */
  async target(service: LogService): Promise<StreamTarget> {
    const { docker, settings } = this.options;
    const name = settings.services[service];
    try {
      const info = await docker.call(`inspect ${name}`, () => docker.engine.getContainer(name).inspect());
      return { id: info.Id, name, tty: info.Config.Tty };
    } catch (err) {
      if (isDockerHttpError(err) && err.statusCode === 404) throw logErrors.containerMissing(service, name);
      throw err;
    }
  }

  /** Reads one container's log (null when the container does not exist); see tail-read.ts. */
  private async read(name: string, request: TailRequest): Promise<LogLine[] | null> {
    const { docker } = this.options;
    try {
      const info = await docker.call(`inspect ${name}`, () => docker.engine.getContainer(name).inspect());
      return await readTail(docker, name, info.Config.Tty, request);
    } catch (err) {
      if (isDockerHttpError(err) && err.statusCode === 404) return null;
      throw err;
    }
  }

  /** Stats of the configured access-log file, or of the proxy container when none is configured. */
  async stats(query: StatsQueryType): Promise<StatsView> {
    const now = this.options.now();
    const window = parseWindow(query, now);
    const { proxy_access_log: path, max_scan_bytes: maxScanBytes, services } = this.options.settings;
    if (path) {
      try {
        return await this.runner.stats({ path, maxScanBytes, window, top: query.top });
      } catch (err) {
        if (!(err instanceof ScanError)) throw err;
        this.options.log.warn({ path, code: err.code }, 'access log cannot be opened');
        throw logErrors.accessLogUnreadable(path, err.code);
      }
    }
    const fallback: TimeWindow = { since: window.since ?? now.getTime() - FALLBACK_WINDOW_MS, until: window.until };
    let lines: LogLine[] | null;
    try {
      lines = await this.read(services.proxy, {
        tail: FALLBACK_MAX_LINES,
        window: fallback,
        stdout: true,
        stderr: true,
      });
    } catch (err) {
      throw logErrors.fallbackUnreadable(services.proxy, (err as Error).message);
    }
    if (lines === null) throw logErrors.fallbackUnreadable(services.proxy, 'no such container');
    const stats = new AccessLogStats();
    for (const line of lines) countLine(stats, line.line, fallback);
    return stats.result(`container:${services.proxy}`, query.top);
  }
}
