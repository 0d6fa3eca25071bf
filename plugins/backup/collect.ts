/**
 * What a backup holds (API.md §4.10): the data dir under `data/` except the audit log, hidden
 * entries (`.cache/`, temp files), lock dirs and `*.tmp`, plus each readable regular file listed in
 * `backup.include` as `extra/<n>-<basename>`.
 */
import { constants } from 'node:fs';
import { access, lstat, readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export interface SourceDir {
  /** Path inside the archive, e.g. `data/middlewares`. */
  name: string;
  mode: number;
}

export interface SourceFile extends SourceDir {
  absolute: string;
  size: number;
  mtime: Date;
}

export interface ExtraFile {
  /** Path inside the archive, `extra/<n>-<basename>`. */
  path: string;
  /** Absolute path the file came from. */
  original_path: string;
}

export interface Sources {
  dirs: SourceDir[];
  files: SourceFile[];
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

/** Walks the data dir and `include`; `backupDir` is skipped should it lie inside the data dir. */
export async function collectSources(dataDir: string, include: string[], backupDir: string): Promise<Sources> {
  const sources: Sources = { dirs: [], files: [], extra: [], skipped: [] };
  const root = path.resolve(dataDir);
  const skip = path.resolve(backupDir);
  sources.dirs.push({ name: 'data', mode: (await stat(root)).mode & 0o777 });

  const walk = async (dir: string, name: string, topLevel: boolean): Promise<void> => {
    let entries: string[];
    try {
      entries = (await readdir(dir)).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // removed while we walked
      throw err;
    }
    for (const entry of entries) {
      if (isExcludedName(entry, topLevel)) continue;
      const absolute = path.join(dir, entry);
      if (absolute === skip) continue;
      const info = await lstat(absolute).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
      if (!info) continue;
      const inner = `${name}/${entry}`;
      if (info.isDirectory()) {
        sources.dirs.push({ name: inner, mode: info.mode & 0o777 });
        await walk(absolute, inner, false);
      } else if (info.isFile()) {
        sources.files.push({ name: inner, absolute, mode: info.mode & 0o777, size: info.size, mtime: info.mtime });
      } else {
        // an archive holds regular files and dirs only (restore refuses anything else)
        sources.skipped.push({ path: inner, reason: info.isSymbolicLink() ? 'symbolic link' : 'not a regular file' });
      }
    }
  };
  await walk(root, 'data', true);

  for (const [index, listed] of include.entries()) {
    const absolute = path.resolve(listed);
    const info = await stat(absolute).catch(() => null);
    const readable =
      info?.isFile() &&
      (await access(absolute, constants.R_OK).then(
        () => true,
        () => false,
      ));
    if (!info || !readable) {
      sources.skipped.push({ path: absolute, reason: info ? 'not a readable regular file' : 'missing' });
      continue;
    }
    const name = `extra/${index + 1}-${path.basename(absolute)}`;
    if (sources.extra.length === 0) sources.dirs.push({ name: 'extra', mode: 0o700 });
    sources.files.push({ name, absolute, mode: info.mode & 0o777, size: info.size, mtime: info.mtime });
    sources.extra.push({ path: name, original_path: absolute });
  }
  return sources;
}
