/** Where the web UI's files are: `ui.dir` when set, else the built-in `ui/dist` of this project. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The project root: the nearest directory above this file holding our package.json. Found by
 * walking up, so it is the same from the sources (plugins/ui/) and from a compiled dist/ tree.
 */
export function projectRoot(from = import.meta.dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'stack-manager') return dir;
      } catch {
        // not ours (or unreadable): keep walking
      }
    }
    if (path.dirname(dir) === dir) return path.resolve(from, '..', '..');
  }
}

/** The directory served at `/`: `ui.dir` resolved against the working directory (API.md §5), or `<project>/ui/dist`. */
export function uiDirectory(configured: string): { dir: string; builtIn: boolean } {
  if (configured !== '') return { dir: path.resolve(configured), builtIn: false };
  return { dir: path.join(projectRoot(), 'ui', 'dist'), builtIn: true };
}
