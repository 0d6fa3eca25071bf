/** Where the web UI's files are: `ui.dir` when set, else the built-in `ui/dist` of this project. */
import path from 'node:path';
import { PROJECT_ROOT } from '../../core/config/load.ts';

/**
 * The directory served at `/`: `ui.dir` resolved against the working directory (API.md §5), or
 * `ui/dist` under the project root (the directory of package.json and config/, found from the
 * code's location, so sources and a compiled dist/ tree agree).
 */
export function uiDirectory(configured: string): { dir: string; builtIn: boolean } {
  if (configured !== '') return { dir: path.resolve(configured), builtIn: false };
  return { dir: path.join(PROJECT_ROOT, 'ui', 'dist'), builtIn: true };
}
