/**
 * The server's public IP (API.md §4.12): providers tried in order, each with 3 s to answer HTTP 200
 * with a body that parses as an IP; the first good answer is cached 5 min.
 */
import { ipVersion } from './ip-address.ts';

/** API.md §4.12 / §2.10. */
export const PROVIDER_TIMEOUT_MS = 3000;
export const PUBLIC_IP_TTL_MS = 5 * 60_000;

export interface PublicIp {
  ip: string;
  version: 4 | 6;
  source: string;
  checked_at: string;
}

export interface PublicIpOptions {
  providers: string[];
  userAgent: string;
  now: () => Date;
  timeoutMs?: number;
  ttlMs?: number;
  /** Aborts pending provider calls (shutdown). */
  signal?: AbortSignal;
}

/** Outcome: the address, or one reason per provider. */
export type LookupResult = { ok: true; value: PublicIp; cached: boolean } | { ok: false; failures: string[] };

export class PublicIpFinder {
  private cache: { value: PublicIp; until: number } | null = null;
  private pending: Promise<LookupResult> | null = null;

  constructor(private readonly options: PublicIpOptions) {}

  /** The cached address while fresh (unless `refresh`); otherwise asks the providers, sharing one round between callers. */
  async lookup(refresh: boolean): Promise<LookupResult> {
    if (!refresh && this.cache && this.options.now().getTime() < this.cache.until)
      return { ok: true, value: this.cache.value, cached: true };
    this.pending ??= this.askProviders().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async askProviders(): Promise<LookupResult> {
    const failures: string[] = [];
    for (const provider of this.options.providers) {
      const answer = await this.ask(provider);
      if (typeof answer !== 'string') {
        failures.push(`${provider}: ${answer.reason}`);
        continue;
      }
      const value: PublicIp = {
        ip: answer,
        version: ipVersion(answer) as 4 | 6,
        source: provider,
        checked_at: this.options.now().toISOString(),
      };
      this.cache = { value, until: this.options.now().getTime() + (this.options.ttlMs ?? PUBLIC_IP_TTL_MS) };
      return { ok: true, value, cached: false };
    }
    return { ok: false, failures };
  }

  /** One provider: the IP it names, or why not. */
  private async ask(provider: string): Promise<string | { reason: string }> {
    const timeoutMs = this.options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetch(provider, {
        headers: { 'user-agent': this.options.userAgent, accept: 'text/plain' },
        signal: this.options.signal ? AbortSignal.any([this.options.signal, timeout]) : timeout,
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        return { reason: `answered ${response.status}` };
      }
      // an IP is at most 45 characters; a long body is not an answer
      const text = (await response.text()).trim();
      if (ipVersion(text) === 0)
        return { reason: `answered something that is not an IP (${JSON.stringify(text.slice(0, 40))})` };
      return text;
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') return { reason: `no answer within ${timeoutMs} ms` };
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return { reason: `unreachable (${cause?.code ?? cause?.message ?? (err as Error).message})` };
    }
  }
}
