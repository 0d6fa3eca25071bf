/**
 * The swap of a restore (API.md §4.10): the data dir's current top-level items are moved into a
 * trash dir, the staged ones renamed into place, then the `extra/` files written back; any failure
 * undoes every step taken, so the data dir ends up as it was.
 */
import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { fsyncDir, writeAtomic } from '../../core/store/atomic-write.ts';
import { isExcludedName } from './collect.ts';

/** File operations of the swap; tests hand in a rename that fails to exercise the rollback. */
export interface SwapFileOps {
  rename(from: string, to: string): Promise<void>;
}

export interface ExtraWrite {
  /** Staged file. */
  from: string;
  /** Its `original_path`, currently listed in `backup.include`. */
  to: string;
  mode: number;
}

export interface SwapPlan {
  dataDir: string;
  /** `<stage>/data`: the archive's data dir, extracted and verified. */
  stagedData: string;
  /** An empty dir beside the data dir (same filesystem, so renames never copy). */
  trash: string;
  /** Swap `auth/` too; otherwise the current one stays, whatever the archive holds. */
  restoreTokens: boolean;
  extras: ExtraWrite[];
}

/**
 * Top-level names a restore leaves alone: what a backup never holds (audit log, hidden entries,
 * locks, temp files) and `auth/` unless tokens are restored.
 */
export function keptInPlace(name: string, restoreTokens: boolean): boolean {
  return isExcludedName(name, true) || (name === 'auth' && !restoreTokens);
}

async function namesIn(dir: string, restoreTokens: boolean): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => !keptInPlace(name, restoreTokens)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Runs the swap; on failure rolls back and rethrows. Returns the number of items moved in. */
export async function swapIn(plan: SwapPlan, ops: SwapFileOps, log: FastifyBaseLogger): Promise<number> {
  const outgoing = await namesIn(plan.dataDir, plan.restoreTokens);
  const incoming = await namesIn(plan.stagedData, plan.restoreTokens);
  const journal: { from: string; to: string }[] = [];
  const replacedExtras: { to: string; previous: Buffer | undefined; mode: number }[] = [];
  const move = async (from: string, to: string) => {
    await ops.rename(from, to);
    journal.push({ from, to });
  };
  try {
    for (const name of outgoing) await move(path.join(plan.dataDir, name), path.join(plan.trash, name));
    for (const name of incoming) await move(path.join(plan.stagedData, name), path.join(plan.dataDir, name));
    for (const extra of plan.extras) {
      const previous = await readFile(extra.to).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
      const mode = previous ? (await stat(extra.to)).mode & 0o777 : extra.mode;
      replacedExtras.push({ to: extra.to, previous, mode });
      await writeAtomic(extra.to, await readFile(extra.from), { mode: extra.mode });
    }
    await fsyncDir(plan.dataDir);
    return incoming.length;
  } catch (err) {
    log.error({ err, moved: journal.length, extras: replacedExtras.length }, 'restore swap failed; rolling back');
    await rollBack(plan.dataDir, journal, replacedExtras, ops, log);
    throw err;
  }
}

/** Undoes a partial swap in reverse order; a step that fails is logged and the rest still tried. */
async function rollBack(
  dataDir: string,
  journal: { from: string; to: string }[],
  extras: { to: string; previous: Buffer | undefined; mode: number }[],
  ops: SwapFileOps,
  log: FastifyBaseLogger,
): Promise<void> {
  for (const extra of extras.reverse()) {
    try {
      if (extra.previous === undefined)
        await unlink(extra.to).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
      else await writeAtomic(extra.to, extra.previous, { mode: extra.mode });
    } catch (err) {
      log.error({ err, file: extra.to }, 'rollback: could not put back an extra file');
    }
  }
  for (const step of journal.reverse()) {
    try {
      await ops.rename(step.to, step.from);
    } catch (err) {
      log.error({ err, from: step.to, to: step.from }, 'rollback: could not move an item back');
    }
  }
  await fsyncDir(dataDir).catch(() => undefined);
}
