/**
 * The background image update check (API.md §4.11): every `containers.updates_check_interval_s` the
 * cluster leader runs the same check as GET /api/container/updates (through the registry cache of
 * `containers.updates_ttl_s`), so a new registry digest is told (`image_update`) without anyone asking.
 * The first check is one interval after start: boots and hot reloads do not ask the registries, and
 * the persisted notices (update-notices.ts) keep what was told. Checks never overlap; a failed one is
 * logged and the next one tries again.
 */
interface Logger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface UpdateCheckOptions {
  /** 0 = no background check */
  intervalMs: number;
  /** Only the cluster leader checks (the others would tell the same news). */
  leads: () => boolean;
  /** One check: ContainerService.updates(false); the result counts for the log line. */
  check: () => Promise<Array<{ update_available: boolean | null }>>;
  log: Logger;
}

export class UpdateCheck {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  /** the error of the last failed check, logged again only when it changes */
  private lastError: string | null = null;

  constructor(private readonly options: UpdateCheckOptions) {}

  start(): void {
    if (this.options.intervalMs <= 0 || this.closed) return;
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  /** One check now unless one is running (then that one); never rejects. */
  tick(): Promise<void> {
    if (this.closed || !this.options.leads()) return Promise.resolve();
    this.running ??= this.run().finally(() => (this.running = null));
    return this.running;
  }

  /** Stops the timer and waits for a check in progress. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      const found = await this.options.check();
      if (this.lastError !== null) this.options.log.info({}, 'image update check works again');
      this.lastError = null;
      const available = found.filter((update) => update.update_available === true).length;
      this.options.log.debug({ services: found.length, available }, 'image update check done');
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.lastError)
        this.options.log.warn({ error: message }, 'image update check failed; tried again next interval');
      this.lastError = message;
    }
  }
}
