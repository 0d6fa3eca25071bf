/**
 * Which registry digest was last told as an image update, per service, kept in the data dir
 * (`.cache/image-update-notices.json`, hidden from the store's watcher, as the certificate notices)
 * so that the first check after a restart or a hot reload does not tell the same update again.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeAtomic } from '../../core/store/atomic-write.ts';

export const IMAGE_UPDATE_NOTICES_FILE = path.join('.cache', 'image-update-notices.json');

export class ImageUpdateNotices {
  /** service → the latest digest told */
  private told = new Map<string, string>();
  /** saves run one after another: the last one written is the newest record */
  private saving: Promise<void> = Promise.resolve();

  /** `dataDir` '' keeps the record in memory only. */
  constructor(private readonly dataDir: string) {}

  /** Loads what earlier runs told; a missing or unreadable file is an empty record. */
  async load(): Promise<void> {
    if (!this.dataDir) return;
    try {
      const saved = JSON.parse(await readFile(path.join(this.dataDir, IMAGE_UPDATE_NOTICES_FILE), 'utf8')) as {
        notices?: unknown;
      };
      const entries = Array.isArray(saved.notices) ? saved.notices : [];
      for (const entry of entries as Array<{ service?: unknown; latest_digest?: unknown }>)
        if (typeof entry.service === 'string' && typeof entry.latest_digest === 'string')
          this.told.set(entry.service, entry.latest_digest);
    } catch {
      this.told = new Map();
    }
  }

  /** Records `digest` as told for `service` (null: up to date again, a later new digest is news). True when changed. */
  set(service: string, digest: string | null): boolean {
    if ((this.told.get(service) ?? null) === digest) return false;
    if (digest === null) this.told.delete(service);
    else this.told.set(service, digest);
    return true;
  }

  /** Writes the record atomically (after any save in progress). */
  save(): Promise<void> {
    const notices = [...this.told].map(([service, digest]) => ({ service, latest_digest: digest }));
    const content = `${JSON.stringify({ format: 1, notices }, null, 1)}\n`;
    const file = path.join(this.dataDir, IMAGE_UPDATE_NOTICES_FILE);
    const next = this.saving.then(() => (this.dataDir ? writeAtomic(file, content, { mode: 0o600 }) : undefined));
    this.saving = next.catch(() => undefined);
    return next;
  }
}
