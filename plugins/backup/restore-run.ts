/**
 * One restore, in the order of API.md §4.10: validate every entry → pre-restore backup → extract
 * into a staging dir beside the data dir → swap by rename (rolled back on failure) → store reload
 * and config regeneration → trash deleted.
 */
import { access, constants, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { ArchiveLimits } from './archive-read.ts';
import type { Manifest } from './manifest.ts';
import { keptInPlace, swapIn, type ExtraWrite, type SwapFileOps } from './restore.ts';
import type { RestoreResultType } from './schemas.ts';
import { stageArchive, stagedPath, verifyArchive } from './verify.ts';

export interface RestoreRun {
  file: string;
  id: string;
  dataDir: string;
  restoreTokens: boolean;
  includeExtra: boolean;
  /** `backup.include` now: only these original paths are written back. */
  include: string[];
  limits: ArchiveLimits;
  ops: SwapFileOps;
  log: FastifyBaseLogger;
  /** Takes the `pre-restore` backup and returns its id. */
  safetyBackup: () => Promise<string>;
  /** `app.store.reload`: runs the swap with the watcher stopped, then re-reads the data dir. */
  reloadStore: (replace: () => Promise<void>) => Promise<void>;
  regenerate: () => Promise<unknown>;
}

/**
 * Where the staging and trash dirs go: beside the data dir when that is the same filesystem and
 * writable (renames never copy); otherwise (the data dir is a mount point, e.g. a Docker volume)
 * inside it under hidden names, which the store, backups and the swap all leave alone.
 */
async function stagingParent(dataDir: string): Promise<string> {
  const parent = path.dirname(dataDir);
  const [own, above] = await Promise.all([stat(dataDir), stat(parent)]);
  const writable = await access(parent, constants.W_OK).then(
    () => true,
    () => false,
  );
  return own.dev === above.dev && writable && parent !== dataDir ? parent : dataDir;
}

/** The `extra/` files to write back: those whose original path is still listed in `backup.include`. */
async function extrasToWrite(
  manifest: Manifest,
  stage: string,
  include: string[],
  log: FastifyBaseLogger,
): Promise<ExtraWrite[]> {
  const listed = new Set(include.map((p) => path.resolve(p)));
  const writes: ExtraWrite[] = [];
  for (const extra of manifest.extra) {
    if (!listed.has(path.resolve(extra.original_path))) {
      log.info(
        { entry: extra.path, original_path: extra.original_path },
        'extra file not written back: its path is no longer in backup.include',
      );
      continue;
    }
    const from = stagedPath(stage, extra.path);
    writes.push({ from, to: path.resolve(extra.original_path), mode: (await stat(from)).mode & 0o777 });
  }
  return writes;
}

export async function runRestore(run: RestoreRun): Promise<RestoreResultType> {
  const started = performance.now();
  run.log.info(
    { backup_id: run.id, restore_tokens: run.restoreTokens, include_extra: run.includeExtra },
    'restore started',
  );
  const verified = await verifyArchive(run.file, run.id, run.limits);
  const safety = await run.safetyBackup();
  const parent = await stagingParent(run.dataDir);
  const base = path.basename(run.dataDir);
  const stage = await mkdtemp(path.join(parent, `.${base}.restore-`));
  const trash = await mkdtemp(path.join(parent, `.${base}.trash-`));
  let swapped = false;
  let extras: ExtraWrite[] = [];
  try {
    await stageArchive(run.file, run.id, stage, verified);
    if (run.includeExtra) extras = await extrasToWrite(verified.manifest, stage, run.include, run.log);
    // the swap runs with the store's watcher stopped; the store then re-reads the data dir, also
    // after a rolled-back swap (then unchanged)
    await run.reloadStore(async () => {
      await swapIn(
        { dataDir: run.dataDir, stagedData: path.join(stage, 'data'), trash, restoreTokens: run.restoreTokens, extras },
        run.ops,
        run.log,
      );
      swapped = true;
    });
    await run.regenerate();
  } finally {
    await rm(stage, { recursive: true, force: true });
    // after a failed swap the trash is empty unless the rollback itself failed: then it holds the old data
    const leftovers = swapped ? [] : await readdir(trash).catch(() => []);
    if (leftovers.length === 0) await rm(trash, { recursive: true, force: true });
    else
      run.log.error(
        { trash, items: leftovers },
        'restore rollback incomplete: the previous data is kept in the trash dir',
      );
  }
  const dataFiles = verified.manifest.files.filter((f) => {
    const [area, top] = f.path.split('/');
    return area === 'data' && !keptInPlace(top, run.restoreTokens);
  }).length;
  const files = dataFiles + extras.length;
  run.log.info(
    {
      backup_id: run.id,
      safety_backup: safety,
      files,
      bytes: verified.bytes,
      ms: Math.round(performance.now() - started),
    },
    'restore finished',
  );
  return { restored: run.id, safety_backup: safety, files };
}
