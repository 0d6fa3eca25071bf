/**
 * What is revoked, and the signed CRL that says so (API.md §4.8). Revoked serials are those of
 * revoked clients plus the `retired` serials of deleted clients (kept in config.yaml until their
 * certificates expire). Every change re-signs `crl.pem` with the CRL number + 1 and
 * nextUpdate = now + `mtls.crl_validity_days`; a timer re-signs it daily.
 */
import type { Collection, StoreDocument } from '../../core/store/types.ts';
import type { LoadedCa } from './ca.ts';
import { buildCrl, CrlSchedule, type CrlEntry } from './crl.ts';
import type { MtlsFiles } from './files.ts';
import type { ClientData, ConfigFileData } from './schemas.ts';
import { DAY_MS, normalizeSerial } from './x509.ts';

export type RetiredSerial = NonNullable<ConfigFileData['crl']>['retired'][number];

export interface RevocationOptions {
  config: StoreDocument<ConfigFileData>;
  clients: Collection<ClientData>;
  files: MtlsFiles;
  ca: () => LoadedCa | null;
  now: () => Date;
  validityDays: number;
  /** Runs work on the group's write queue (the daily re-sign must not interleave with API writes). */
  serial: <T>(work: () => Promise<T>) => Promise<T>;
  onError: (err: unknown) => void;
}

export class Revocation {
  private cache: Set<string> | null = null;
  private readonly schedule: CrlSchedule;

  constructor(private readonly options: RevocationOptions) {
    this.schedule = new CrlSchedule(() => options.serial(() => this.sign()), DAY_MS, options.onError);
  }

  /** Normalised serials that /api/mtls/verify refuses (expired ones included: harmless). */
  serials(): ReadonlySet<string> {
    this.cache ??= new Set([
      ...this.options.clients
        .list()
        .filter((c) => c.data.revoked)
        .map((c) => normalizeSerial(c.data.serial)),
      ...this.retired().map((r) => normalizeSerial(r.serial)),
    ]);
    return this.cache;
  }

  /** Drops the cached serials (any change of clients or config.yaml). */
  invalidate(): void {
    this.cache = null;
  }

  retired(): RetiredSerial[] {
    return this.options.config.get().crl?.retired ?? [];
  }

  /** The retired-list entry of a deleted client: listed in the CRL until its certificate expires. */
  retiredEntry(client: ClientData, now: Date): RetiredSerial {
    return { serial: client.serial, revoked_at: client.revoked_at ?? now.toISOString(), expiry: client.expiry };
  }

  /**
   * Signs a new CRL (the caller holds the write queue): CRL number + 1, nextUpdate = now +
   * `crl_validity_days`, the retired list plus `retire` minus expired certificates. Computed from
   * config.yaml as it is on disk at that moment (a hand edit or a restore may not be read in yet),
   * recorded there, then `crl.pem` is written.
   */
  async sign(retire: RetiredSerial[] = []): Promise<void> {
    const ca = this.options.ca();
    if (!ca) return;
    const now = this.options.now();
    const alive = (expiry: string) => Date.parse(expiry) > now.getTime();
    let pem = '';
    await this.options.config.update((current) => {
      const retiring = new Set(retire.map((r) => r.serial));
      const retired = [...(current.crl?.retired ?? []).filter((r) => !retiring.has(r.serial)), ...retire].filter((r) =>
        alive(r.expiry),
      );
      const entries = new Map<string, CrlEntry>();
      for (const c of this.options.clients.list()) {
        if (c.data.revoked && alive(c.data.expiry))
          entries.set(c.data.serial, { serial: c.data.serial, revoked_at: c.data.revoked_at ?? c.updated_at });
      }
      for (const r of retired)
        if (!entries.has(r.serial)) entries.set(r.serial, { serial: r.serial, revoked_at: r.revoked_at });
      const number = (current.crl?.number ?? 0) + 1;
      const nextUpdate = new Date(now.getTime() + this.options.validityDays * DAY_MS);
      const sorted = [...entries.values()].sort((a, b) => (a.serial < b.serial ? -1 : a.serial > b.serial ? 1 : 0));
      pem = buildCrl(ca, { number, thisUpdate: now, nextUpdate, entries: sorted });
      return {
        ...current,
        crl: { number, this_update: now.toISOString(), next_update: nextUpdate.toISOString(), retired },
        updated_at: now.toISOString(),
      };
    });
    await this.options.files.writeCrl(pem);
    this.invalidate();
    this.schedule.arm(now, now);
  }

  /** Arms the daily timer from the stored signing time (startup, CA loaded from disk). */
  arm(): void {
    const signed = this.options.config.get().crl?.this_update;
    if (this.options.ca() && signed) this.schedule.arm(new Date(signed), this.options.now());
    else this.schedule.disarm();
  }

  disarm(): void {
    this.schedule.disarm();
  }

  close(): void {
    this.schedule.close();
  }
}
