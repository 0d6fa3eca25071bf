/**
 * Building one backup: the archive worker (archive-runner.ts) collects the sources and writes the
 * archive to a temp file, reading each file once and hashing the bytes it archives, so a write
 * meanwhile can never make manifest and archive disagree; the rename into place happens here,
 * through the service's file operations.
 */
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir } from '../../core/store/atomic-write.ts';
import type { Sources } from './collect.ts';
import { runInWorker } from './archive-runner.ts';
import { fileNameOf, type BackupKind } from './naming.ts';

export interface BackupSources {
  dataDir: string;
  backupDir: string;
  /** `backup.include`. */
  include: string[];
  appVersion: string;
}

export interface BuiltBackup {
  /** Files archived (the manifest's `files`). */
  files: number;
  /** tar entries (manifest, dirs, files) */
  entries: number;
  /** Archive size in bytes. */
  size: number;
  /** Sum of the archived file sizes (uncompressed). */
  bytes: number;
  skipped: Sources['skipped'];
}

/** Writes `BACKUP_DIR/<id>.tar.gz` (temp name, fsync, 0600, rename, dir fsync). */
export async function buildBackup(
  from: BackupSources,
  what: { id: string; kind: BackupKind; note: string; createdAt: Date },
  rename: (from: string, to: string) => Promise<void>,
): Promise<BuiltBackup> {
  const target = path.join(from.backupDir, fileNameOf(what.id));
  const built = await runInWorker({
    kind: 'build',
    dataDir: from.dataDir,
    include: from.include,
    backupDir: from.backupDir,
    target,
    meta: {
      created_at: what.createdAt.toISOString(),
      app_version: from.appVersion,
      kind: what.kind,
      note: what.note,
    },
  });
  try {
    await rename(built.temp, target);
  } catch (err) {
    await unlink(built.temp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(from.backupDir);
  return { files: built.files, entries: built.entries, size: built.size, bytes: built.bytes, skipped: built.skipped };
}

/** What a backup made now would hold (dry run): nothing is read beyond file sizes, nothing written. */
export async function planBackup(
  from: BackupSources,
): Promise<{ files: number; bytes: number; entries: { path: string; size: number }[] }> {
  const { entries } = await runInWorker({
    kind: 'plan',
    dataDir: from.dataDir,
    include: from.include,
    backupDir: from.backupDir,
  });
  return { files: entries.length, bytes: entries.reduce((sum, e) => sum + e.size, 0), entries };
}
