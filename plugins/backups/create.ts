/**
 * Building one backup: collect the sources, hash them, write the archive with its manifest. A
 * file that changes between hashing and archiving (a write through the API meanwhile) makes the
 * attempt start over, so the manifest always matches the archived bytes.
 */
import path from 'node:path';
import { collectSources, type SourceFile, type Sources } from './collect.ts';
import { hashFile, readAhead, SourceChanged, writeArchive, type HashedFile } from './archive-write.ts';
import type { Manifest } from './manifest.ts';
import { fileNameOf, type BackupKind } from './naming.ts';

const ATTEMPTS = 3;

export interface BackupSources {
  dataDir: string;
  backupDir: string;
  /** `backup.include`. */
  include: string[];
  appVersion: string;
}

export interface BuiltBackup {
  manifest: Manifest;
  /** Archive size in bytes. */
  size: number;
  /** Sum of the archived file sizes (uncompressed). */
  bytes: number;
  skipped: Sources['skipped'];
}

/** Hashes every source file; files removed meanwhile are left out. */
async function hashAll(sources: Sources): Promise<HashedFile[]> {
  const hashed: HashedFile[] = [];
  const hash = (file: SourceFile) => hashFile(file.absolute).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  for await (const [file, result] of readAhead(sources.files, hash)) {
    if (result) hashed.push({ ...file, ...result });
  }
  return hashed;
}

/** Writes `BACKUP_DIR/<id>.tar.gz` (temp name, fsync, 0600, rename). */
export async function buildBackup(
  from: BackupSources,
  what: { id: string; kind: BackupKind; note: string; createdAt: Date },
  rename: (from: string, to: string) => Promise<void>,
): Promise<BuiltBackup> {
  const target = path.join(from.backupDir, fileNameOf(what.id));
  for (let attempt = 1; ; attempt++) {
    const sources = await collectSources(from.dataDir, from.include, from.backupDir);
    const files = await hashAll(sources);
    const present = new Set(files.map((f) => f.name));
    const manifest: Manifest = {
      format: 1,
      created_at: what.createdAt.toISOString(),
      app_version: from.appVersion,
      kind: what.kind,
      note: what.note,
      files: files.map((f) => ({ path: f.name, size: f.size, sha256: f.sha256 })),
      extra: sources.extra.filter((e) => present.has(e.path)),
    };
    try {
      const size = await writeArchive(target, { manifest, dirs: sources.dirs, files, rename });
      return { manifest, size, bytes: files.reduce((sum, f) => sum + f.size, 0), skipped: sources.skipped };
    } catch (err) {
      if (!(err instanceof SourceChanged) || attempt >= ATTEMPTS) throw err;
    }
  }
}

/** What a backup made now would hold (dry run): nothing is read beyond file sizes, nothing written. */
export async function planBackup(from: BackupSources): Promise<{ files: number; bytes: number; entries: { path: string; size: number }[] }> {
  const sources = await collectSources(from.dataDir, from.include, from.backupDir);
  const entries = sources.files.map((f) => ({ path: f.name, size: f.size }));
  return { files: entries.length, bytes: entries.reduce((sum, e) => sum + e.size, 0), entries };
}
