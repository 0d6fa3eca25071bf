/**
 * Which expiry thresholds (14, 3, 0 days) were already announced for which certificate, kept in the
 * data file `metrics/certificate-notices.yaml` so neither a restart nor a new cluster leader announces them
 * again: it is written through the store, so in cluster mode it is replicated through etcd like any
 * data file, and the leader that takes over reads what the old one recorded (it is re-read before
 * each round of announcements). A certificate is its CN and notAfter: a renewed one is a new certificate.
 */
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { YamlStore } from '../../core/store/types.ts';

export const THRESHOLDS_DAYS = [14, 3, 0] as const;
export type ThresholdDays = (typeof THRESHOLDS_DAYS)[number];

/** Notices of certificates that expired longer ago than this are forgotten. */
const FORGET_AFTER_S = 60 * 86_400;

/** The record, relative to the data dir (a YAML file like every data file, API.md §3): not hidden, so replicated in cluster mode. */
export const NOTICES_FILE = path.join('metrics', 'certificate-notices.yaml');
/** Where versions before the cluster fix kept it (one node's cache): still read, so an upgrade repeats nothing. */
export const LEGACY_NOTICES_FILE = path.join('.cache', 'certificate-notices.json');

/** What the record needs of the store. */
export type NoticeStore = Pick<YamlStore, 'readRaw' | 'writeRaw'>;

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

  constructor(private readonly store: NoticeStore) {}

  /** Loads what earlier runs announced (also the legacy cache file); a missing or unreadable file is an empty record. */
  async load(): Promise<void> {
    await this.merge(LEGACY_NOTICES_FILE);
    await this.reload();
  }

  /**
   * Takes in the record as the data file has it now (another node's, when it led last), keeping what
   * this node holds: per certificate, the smaller threshold wins.
   */
  async reload(): Promise<void> {
    await this.merge(NOTICES_FILE);
  }

  /** True when `threshold` (or a smaller one, announced later in the certificate's life) was announced. */
  announced(cn: string, notAfter: number, threshold: ThresholdDays): boolean {
    const notice = this.notices.get(keyOf(cn, notAfter));
    return notice !== undefined && notice.threshold <= threshold;
  }

  record(cn: string, notAfter: number, threshold: ThresholdDays): void {
    this.notices.set(keyOf(cn, notAfter), { notAfter, threshold });
  }

  /** Writes the record (atomically, through the store: replicated first in cluster mode), without the certificates long expired. */
  async save(nowS: number): Promise<void> {
    for (const [key, notice] of this.notices) if (notice.notAfter < nowS - FORGET_AFTER_S) this.notices.delete(key);
    const notices = [...this.notices].map(([key, notice]) => ({
      cn: key.slice(0, key.lastIndexOf('\n')),
      not_after: notice.notAfter,
      threshold: notice.threshold,
    }));
    await this.store.writeRaw(NOTICES_FILE, stringify({ format: 1, notices }), 0o600);
  }

  private async merge(relative: string): Promise<void> {
    let saved: { notices?: unknown };
    try {
      const bytes = await this.store.readRaw(relative);
      if (!bytes) return;
      // YAML (JSON is YAML too: the legacy cache file reads the same way)
      saved = parse(bytes.toString('utf8')) as { notices?: unknown };
    } catch {
      return;
    }
    const entries = Array.isArray(saved?.notices) ? saved.notices : [];
    for (const entry of entries as Array<{ cn?: unknown; not_after?: unknown; threshold?: unknown } | null>) {
      if (typeof entry?.cn !== 'string' || typeof entry.not_after !== 'number') continue;
      if (!THRESHOLDS_DAYS.includes(entry.threshold as ThresholdDays)) continue;
      const threshold = entry.threshold as ThresholdDays;
      if (this.announced(entry.cn, entry.not_after, threshold)) continue;
      this.notices.set(keyOf(entry.cn, entry.not_after), { notAfter: entry.not_after, threshold });
    }
  }
}

const keyOf = (cn: string, notAfter: number) => `${cn}\n${notAfter}`;
