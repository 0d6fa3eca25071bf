/**
 * Which expiry thresholds (14, 3, 0 days) were already announced for which certificate, kept in the
 * data dir (`.cache/certificate-notices.json`, hidden from the store's watcher) so a restart does not
 * announce them again. A certificate is its CN and notAfter: a renewed one is a new certificate.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeAtomic } from '../../core/store/atomic-write.ts';

export const THRESHOLDS_DAYS = [14, 3, 0] as const;
export type ThresholdDays = (typeof THRESHOLDS_DAYS)[number];

/** Notices of certificates that expired longer ago than this are forgotten. */
const FORGET_AFTER_S = 60 * 86_400;

export const NOTICES_FILE = path.join('.cache', 'certificate-notices.json');

/** The threshold a certificate with `daysLeft` whole days left has reached, or null (more than 14 days). */
export function thresholdFor(daysLeft: number): ThresholdDays | null {
  if (daysLeft <= 0) return 0;
  if (daysLeft <= 3) return 3;
  if (daysLeft <= 14) return 14;
  return null;
}

export class CertificateNotices {
  /** `<cn>\n<notAfter>` → the smallest threshold announced */
  private notices = new Map<string, { notAfter: number; threshold: ThresholdDays }>();

  constructor(private readonly dataDir: string) {}

  private get file(): string {
    return path.join(this.dataDir, NOTICES_FILE);
  }

  /** Loads what earlier runs announced; a missing or unreadable file is an empty record. */
  async load(): Promise<void> {
    try {
      const saved = JSON.parse(await readFile(this.file, 'utf8')) as { notices?: unknown };
      const entries = Array.isArray(saved.notices) ? saved.notices : [];
      for (const entry of entries as Array<{ cn?: unknown; not_after?: unknown; threshold?: unknown }>) {
        if (typeof entry.cn !== 'string' || typeof entry.not_after !== 'number') continue;
        if (!THRESHOLDS_DAYS.includes(entry.threshold as ThresholdDays)) continue;
        this.notices.set(keyOf(entry.cn, entry.not_after), {
          notAfter: entry.not_after,
          threshold: entry.threshold as ThresholdDays,
        });
      }
    } catch {
      this.notices = new Map();
    }
  }

  /** True when `threshold` (or a smaller one, announced later in the certificate's life) was announced. */
  announced(cn: string, notAfter: number, threshold: ThresholdDays): boolean {
    const notice = this.notices.get(keyOf(cn, notAfter));
    return notice !== undefined && notice.threshold <= threshold;
  }

  record(cn: string, notAfter: number, threshold: ThresholdDays): void {
    this.notices.set(keyOf(cn, notAfter), { notAfter, threshold });
  }

  /** Writes the record (atomically), without the certificates long expired. */
  async save(nowS: number): Promise<void> {
    for (const [key, notice] of this.notices) if (notice.notAfter < nowS - FORGET_AFTER_S) this.notices.delete(key);
    const notices = [...this.notices].map(([key, notice]) => ({
      cn: key.slice(0, key.lastIndexOf('\n')),
      not_after: notice.notAfter,
      threshold: notice.threshold,
    }));
    await writeAtomic(this.file, `${JSON.stringify({ format: 1, notices }, null, 1)}\n`, { mode: 0o600 });
  }
}

const keyOf = (cn: string, notAfter: number) => `${cn}\n${notAfter}`;
