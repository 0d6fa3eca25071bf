/** Failed-authentication limit per client IP (API.md §2.3): a fixed window opened by the first failure. */

interface Window {
  failures: number;
  endsAt: number;
}

/** Past this many tracked IPs, expired windows are swept so a scan from many addresses cannot grow memory forever. */
const SWEEP_THRESHOLD = 1000;

/** Counts failures per IP; after `maxFailures` in one window the IP is blocked until the window ends. */
export class FailureLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Seconds until `ip` may try again (≥ 1), or 0 when it is not blocked. */
  retryAfter(ip: string): number {
    const window = this.current(ip);
    if (!window || window.failures < this.maxFailures) return 0;
    return Math.max(1, Math.ceil((window.endsAt - this.now()) / 1000));
  }

  /** Records one failed authentication from `ip`. */
  fail(ip: string): void {
    const window = this.current(ip);
    if (window) window.failures += 1;
    else this.windows.set(ip, { failures: 1, endsAt: this.now() + this.windowMs });
    if (this.windows.size > SWEEP_THRESHOLD) this.sweep();
  }

  private current(ip: string): Window | undefined {
    const window = this.windows.get(ip);
    if (window && window.endsAt <= this.now()) {
      this.windows.delete(ip);
      return undefined;
    }
    return window;
  }

  private sweep(): void {
    const now = this.now();
    for (const [ip, window] of this.windows) if (window.endsAt <= now) this.windows.delete(ip);
  }
}
