/**
 * Building one backup: collect the sources, then write the archive streaming (archive-stream.ts):
 * each file is read once and its manifest hash taken from the bytes archived, so a write through
 * the API meanwhile can never make them disagree.
 */
import path from 'node:path';
import { collectSources, type Sources } from './collect.ts';
import { writeStreamingArchive } from './archive-stream.ts';
import type { Manifest } from './manifest.ts';
import { fileNameOf, type BackupKind } from './naming.ts';

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

/** Writes `BACKUP_DIR/<id>.tar.gz` (temp name, fsync, 0600, rename), reading every file once. */
export async function buildBackup(
  from: BackupSources,
  what: { id: string; kind: BackupKind; note: string; createdAt: Date },
  rename: (from: string, to: string) => Promise<void>,
): Promise<BuiltBackup> {
  const target = path.join(from.backupDir, fileNameOf(what.id));
  const sources = await collectSources(from.dataDir, from.include, from.backupDir);
  let bytes = 0;
  const { size, manifest } = await writeStreamingArchive(target, {
    dirs: sources.dirs,
    files: sources.files,
    rename,
    manifestOf: (archived) => {
      const present = new Set(archived.map((f) => f.name));
      bytes = archived.reduce((sum, f) => sum + f.size, 0);
      return {
        format: 1,
        created_at: what.createdAt.toISOString(),
        app_version: from.appVersion,
        kind: what.kind,
        note: what.note,
        files: archived.map((f) => ({ path: f.name, size: f.size, sha256: f.sha256 })),
        // a file removed since the listing is left out, and so is its extra entry
        extra: sources.extra.filter((e) => present.has(e.path)),
      };
    },
  });
  return { manifest, size, bytes, skipped: sources.skipped };
}

/** What a backup made now would hold (dry run): nothing is read beyond file sizes, nothing written. */
export async function planBackup(
  from: BackupSources,
): Promise<{ files: number; bytes: number; entries: { path: string; size: number }[] }> {
  const sources = await collectSources(from.dataDir, from.include, from.backupDir);
  const entries = sources.files.map((f) => ({ path: f.name, size: f.size }));
  return { files: entries.length, bytes: entries.reduce((sum, e) => sum + e.size, 0), entries };
}
