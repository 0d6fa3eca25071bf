/** The archives in BACKUP_DIR as Backup objects (API.md §4.10), their metadata read from each head once. */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { readManifestHead } from './archive-read.ts';
import { describeId, fileNameOf, idOfFileName } from './naming.ts';
import type { BackupView } from './schemas.ts';

export class BackupCatalogue {
  /** Metadata per id, keyed by size and mtime: a changed file is read again. */
  private readonly described = new Map<string, { key: string; view: BackupView }>();

  constructor(readonly dir: string) {}

  /** `BACKUP_DIR/<id>.tar.gz`. */
  fileOf(id: string): string {
    return path.join(this.dir, fileNameOf(id));
  }

  /** Ids of the archives present (none when BACKUP_DIR does not exist yet). */
  async ids(): Promise<Set<string>> {
    const names = await readdir(this.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [] as string[];
      throw err;
    });
    return new Set(names.map(idOfFileName).filter((id): id is string => id !== undefined));
  }

  /** All backups, newest first (created_at, then id). */
  async list(): Promise<BackupView[]> {
    const views: BackupView[] = [];
    for (const id of await this.ids()) {
      const view = await this.describe(id);
      if (view) views.push(view);
    }
    const order = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
    return views.sort((a, b) => order(a.created_at, b.created_at) || order(a.id, b.id));
  }

  /**
   * One backup, or undefined when its file is gone. Metadata come from the manifest at the
   * archive's head; an archive without a readable one is still listed, from its id alone.
   */
  async describe(id: string): Promise<BackupView | undefined> {
    const file = this.fileOf(id);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) return undefined;
    const key = `${info.size}:${info.mtimeMs}`;
    const cached = this.described.get(id);
    if (cached?.key === key) return cached.view;
    const manifest = await readManifestHead(file);
    const view: BackupView = manifest
      ? {
          id,
          file: fileNameOf(id),
          size: info.size,
          created_at: manifest.created_at,
          kind: manifest.kind,
          note: manifest.note,
          app_version: manifest.app_version,
          files: manifest.files.length,
        }
      : { id, file: fileNameOf(id), size: info.size, ...describeId(id), note: '', app_version: 'unknown', files: 0 };
    this.described.set(id, { key, view });
    return view;
  }

  /** Takes the metadata of an archive just written (no need to read it back). */
  async remember(view: BackupView): Promise<void> {
    const info = await stat(this.fileOf(view.id));
    this.described.set(view.id, { key: `${info.size}:${info.mtimeMs}`, view });
  }

  forget(id: string): void {
    this.described.delete(id);
  }
}
