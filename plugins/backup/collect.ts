/**
 * What a backup holds (API.md §4.10): the data dir under `data/` except the audit log, hidden
 * entries (`.cache/`, temp files), lock dirs and `*.tmp`, plus each readable regular file listed in
 * `backup.include` as `extra/<n>-<basename>`.
 *
 * The walk is synchronous: it runs in the archive worker (archive-worker.ts), where blocking calls
 * cost no other request anything, and a backup of 20,000 files is dominated by per-file overhead:
 * a promise and a thread-pool round trip per lstat/open/read/close cost ~10× the syscalls (issue 11).
 * File types come from readdir (d_type), so a file is never lstat'ed: the archive takes mode, size
 * and mtime from fstat of the descriptor it reads (archive-body.ts).
 */
import { accessSync, constants, lstatSync, readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';

export interface SourceDir {
  /** Path inside the archive, e.g. `data/middlewares`. */
  name: string;
  mode: number;
}

export interface SourceFile {
  /** Path inside the archive. */
  name: string;
  absolute: string;
  /** An `extra/` file: links are followed (a data dir file that is a link is never archived). */
  followLinks: boolean;
}

export interface ExtraFile {
  /** Path inside the archive, `extra/<n>-<basename>`. */
  path: string;
  /** Absolute path the file came from. */
  original_path: string;
}

export interface Sources {
  dirs: SourceDir[];
  extra: ExtraFile[];
  /** Entries left out that a reader might expect (symlinks, sockets, unreadable extras). */
  skipped: { path: string; reason: string }[];
}

/**
 * Names never archived and never touched by a restore: hidden entries (`.cache`, the store's temp
 * files), `*.tmp`, `*.lock` (proper-lockfile dirs) and, at the top level, `audit.log` and its rotations.
 */
export function isExcludedName(name: string, topLevel: boolean): boolean {
  return (
    name.startsWith('.') ||
    name.endsWith('.tmp') ||
    name.endsWith('.lock') ||
    (topLevel && /^audit\.log(\.\d+)?$/.test(name))
  );
}

const byName = (a: Dirent, b: Dirent): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Entries of `dir` sorted by name, or none when it was removed while we walked. */
function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort(byName);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * Walks the data dir and `include`, handing each file to `onFile` as it is found (the archive reads
 * it right away: no list of 20,000 files is kept); `backupDir` is skipped should it lie inside the
 * data dir.
 */
export function collectSources(
  dataDir: string,
  include: string[],
  backupDir: string,
  onFile: (file: SourceFile) => void,
): Sources {
  const sources: Sources = { dirs: [], extra: [], skipped: [] };
  const root = path.resolve(dataDir);
  const skip = path.resolve(backupDir);
  sources.dirs.push({ name: 'data', mode: statSync(root).mode & 0o777 });

  const walk = (dir: string, name: string, topLevel: boolean): void => {
    for (const entry of entriesOf(dir)) {
      if (isExcludedName(entry.name, topLevel)) continue;
      const absolute = path.join(dir, entry.name);
      if (absolute === skip) continue;
      const inner = `${name}/${entry.name}`;
      if (entry.isDirectory()) {
        const info = lstatSync(absolute, { throwIfNoEntry: false });
        if (!info?.isDirectory()) continue; // removed or replaced while we walked
        sources.dirs.push({ name: inner, mode: info.mode & 0o777 });
        walk(absolute, inner, false);
      } else if (entry.isFile()) {
        onFile({ name: inner, absolute, followLinks: false });
      } else {
        // an archive holds regular files and dirs only (restore refuses anything else)
        sources.skipped.push({ path: inner, reason: entry.isSymbolicLink() ? 'symbolic link' : 'not a regular file' });
      }
    }
  };
  walk(root, 'data', true);

  for (const [index, listed] of include.entries()) {
    const absolute = path.resolve(listed);
    const info = statSync(absolute, { throwIfNoEntry: false });
    let readable = false;
    if (info?.isFile()) {
      try {
        accessSync(absolute, constants.R_OK);
        readable = true;
      } catch {
        // reported below
      }
    }
    if (!info || !readable) {
      sources.skipped.push({ path: absolute, reason: info ? 'not a readable regular file' : 'missing' });
      continue;
    }
    const name = `extra/${index + 1}-${path.basename(absolute)}`;
    if (sources.extra.length === 0) sources.dirs.push({ name: 'extra', mode: 0o700 });
    onFile({ name, absolute, followLinks: true });
    sources.extra.push({ path: name, original_path: absolute });
  }
  return sources;
}

/** Path and size of each file a backup made now would hold (dry run); nothing is opened. */
export function planSources(dataDir: string, include: string[], backupDir: string): { path: string; size: number }[] {
  const sized: { path: string; size: number }[] = [];
  collectSources(dataDir, include, backupDir, (file) => {
    const info = (file.followLinks ? statSync : lstatSync)(file.absolute, { throwIfNoEntry: false });
    if (info?.isFile()) sized.push({ path: file.name, size: info.size }); // else removed since the listing
  });
  return sized;
}
