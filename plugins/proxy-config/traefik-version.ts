/**
 * The version of the Traefik polling the default document (API.md §4.9 G14): the
 * `proxy.traefik_version` setting when set, else what the explorer's Traefik source answers at
 * `/api/version`. That answer is read at start, on POST /invalidate and every `intervalMs` (one
 * small request; the explorer caches it 1 s); listeners hear of a change of version or of Traefik's
 * `startDate` (a restart may be an upgrade). A failed read keeps the last version known: the same
 * Traefik is most likely still there. §4.19's live checker can take its reads from here.
 */

export interface VersionAnswer {
  version: string;
  start_date: string | null;
}

export interface TraefikVersionView {
  /** the version the gate uses, null when unknown */
  version: string | null;
  source: 'setting' | 'traefik' | null;
  /** Traefik's `startDate` at the last successful read */
  start_date: string | null;
  /** why the last read failed (null when it did not, or when the setting decides) */
  error: string | null;
}

export interface TraefikVersionOptions {
  /** `proxy.traefik_version`; '' = read it from Traefik */
  setting: string;
  /** reads `/api/version` of the explorer's Traefik source; null when there is no such source */
  read: (() => Promise<VersionAnswer>) | null;
  intervalMs: number;
  onError?: (err: unknown) => void;
}

export const VERSION_READ_INTERVAL_MS = 30_000;

export class TraefikVersion {
  private answer: VersionAnswer | null = null;
  private error: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly options: TraefikVersionOptions) {}

  /** The version documents are gated for. */
  current(): string | null {
    return this.options.setting || this.answer?.version || null;
  }

  view(): TraefikVersionView {
    if (this.options.setting)
      return { version: this.options.setting, source: 'setting', start_date: null, error: null };
    return {
      version: this.answer?.version ?? null,
      source: this.answer ? 'traefik' : null,
      start_date: this.answer?.start_date ?? null,
      error: this.error,
    };
  }

  /** Hears of every change of the version or of Traefik's start date. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads now (then periodically); nothing to read when the setting decides. */
  start(): void {
    if (this.options.setting || !this.options.read) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.intervalMs);
    this.timer.unref();
  }

  /** One read (concurrent callers share it); resolves when it is done, never rejects. */
  refresh(): Promise<void> {
    if (this.options.setting || !this.options.read) return Promise.resolve();
    this.reading ??= this.readOnce().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  private async readOnce(): Promise<void> {
    try {
      const answer = await this.options.read!();
      this.error = null;
      const before = this.answer;
      this.answer = { version: answer.version, start_date: answer.start_date };
      if (before?.version === answer.version && before.start_date === answer.start_date) return;
      for (const listener of this.listeners) listener();
    } catch (err) {
      this.error = (err as Error).message ?? String(err);
      this.options.onError?.(err);
    }
  }
}
