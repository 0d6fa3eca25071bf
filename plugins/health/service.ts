/** Health checks: each dependency registers a probe; deep checks run them in parallel with a 3 s cap. */
import { mkdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { uptimeSeconds } from '../../core/version.ts';
import { CHECK_NAMES, type CheckName, type CheckResult, type HealthBody } from './schemas.ts';

const CHECK_TIMEOUT_MS = 3000;

/** A probe resolves when healthy, throws when not, or returns 'skipped' when not configured. */
export type Probe = () => Promise<void | 'skipped'>;

export class HealthService {
  private readonly probes = new Map<CheckName, Probe>();

  constructor(
    private readonly version: string,
    dataDir: string,
  ) {
    this.probes.set('data_dir', async () => {
      await mkdir(dataDir, { recursive: true });
      const file = path.join(dataDir, `.health-${randomBytes(4).toString('hex')}.tmp`);
      await writeFile(file, 'ok');
      await unlink(file);
    });
  }

  /** Adds the probe of a dependency (docker, crowdsec, datasource). */
  register(name: CheckName, probe: Probe): void {
    this.probes.set(name, probe);
  }

  summary(): HealthBody {
    // the process's uptime: the early handler (core/early-server.ts) reports the same clock
    return { status: 'ok', version: this.version, uptime_s: uptimeSeconds() };
  }

  async deep(): Promise<HealthBody> {
    const entries = await Promise.all(
      CHECK_NAMES.map(async (name) => [name, await this.run(this.probes.get(name))] as const),
    );
    const checks = Object.fromEntries(entries) as Record<CheckName, CheckResult>;
    const failed = entries.some(([, r]) => r.status === 'fail');
    return { ...this.summary(), status: failed ? 'fail' : 'ok', checks };
  }

  private async run(probe: Probe | undefined): Promise<CheckResult> {
    if (!probe) return { status: 'skipped', latency_ms: 0, error: null };
    const start = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await Promise.race([
        probe(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
        }),
      ]);
      const latency_ms = Math.round(performance.now() - start);
      return outcome === 'skipped'
        ? { status: 'skipped', latency_ms, error: null }
        : { status: 'ok', latency_ms, error: null };
    } catch (err) {
      return { status: 'fail', latency_ms: Math.round(performance.now() - start), error: (err as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }
}
