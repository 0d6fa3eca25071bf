/**
 * The work of the archive worker (archive-worker.ts): a dry-run plan or a whole archive. Plain data
 * in and out (it crosses a thread boundary), no logger, no app.
 */
import path from 'node:path';
import { writeArchive } from './archive-stream.ts';
import { collectSources, planSources, type Sources } from './collect.ts';
import type { Manifest } from './manifest.ts';

interface SourceSettings {
  dataDir: string;
  /** `backup.include`. */
  include: string[];
  backupDir: string;
}

export type ArchiveJob =
  | ({ kind: 'plan' } & SourceSettings)
  | ({
      kind: 'build';
      /** The archive's final path: its temp file is written beside it. */
      target: string;
      meta: Pick<Manifest, 'created_at' | 'app_version' | 'kind' | 'note'>;
    } & SourceSettings);

export type ArchiveJobResult =
  | { kind: 'plan'; entries: { path: string; size: number }[] }
  | {
      kind: 'build';
      /** The fsynced temp file, to be renamed to `target`. */
      temp: string;
      /** Archive size in bytes. */
      size: number;
      /** Files archived (the manifest's `files`). */
      files: number;
      /** tar entries: the manifest, the dirs and the files (what restore's entry limit counts) */
      entries: number;
      /** Sum of the archived file sizes (uncompressed). */
      bytes: number;
      skipped: Sources['skipped'];
    };

export function runArchiveJob(job: ArchiveJob): ArchiveJobResult {
  if (job.kind === 'plan') return { kind: 'plan', entries: planSources(job.dataDir, job.include, job.backupDir) };
  let bytes = 0;
  const { temp, size, manifest, sources } = writeArchive(path.dirname(job.target), path.basename(job.target), {
    walk: (onFile) => collectSources(job.dataDir, job.include, job.backupDir, onFile),
    manifestOf: (archived, found) => {
      const present = new Set(archived.map((f) => f.path));
      bytes = archived.reduce((sum, f) => sum + f.size, 0);
      return {
        format: 1,
        ...job.meta,
        files: archived,
        // a file removed since the listing is left out, and so is its extra entry
        extra: found.extra.filter((e) => present.has(e.path)),
      };
    },
  });
  const files = manifest.files.length;
  const entries = 1 + sources.dirs.length + files;
  return { kind: 'build', temp, size, files, entries, bytes, skipped: sources.skipped };
}
