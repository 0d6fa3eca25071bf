/**
 * Temp files of interrupted writes (API.md §3.4): writeAtomic writes `.<name>.<random>.tmp` beside
 * the target and renames it; a process killed in between leaves the temp file behind. At startup
 * those older than a minute are removed (a younger one may belong to a write in progress, e.g. of
 * a previous instance still shutting down).
 */
import { readdir, lstat, unlink } from 'node:fs/promises';
import path from 'node:path';

export const STALE_TEMP_MS = 60_000;
/** The name writeAtomic gives its temp files. */
export const TEMP_FILE = /^\..+\.tmp$/;
/** Data dir depth the store uses (collections are at most a few levels deep). */
const MAX_DEPTH = 4;

/** Removes temp files last modified before `olderThanMs` under `dir`; returns how many. Symlinked dirs are not entered. */
export async function removeStaleTempFiles(dir: string, olderThanMs: number, depth = 0): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0; // vanished or unreadable: nothing to clean here
  }
  let removed = 0;
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && depth < MAX_DEPTH) {
      removed += await removeStaleTempFiles(full, olderThanMs, depth + 1);
    } else if (entry.isFile() && TEMP_FILE.test(entry.name)) {
      const stats = await lstat(full).catch(() => null);
      if (stats && stats.mtimeMs < olderThanMs)
        removed += await unlink(full).then(
          () => 1,
          () => 0,
        );
    }
  }
  return removed;
}
