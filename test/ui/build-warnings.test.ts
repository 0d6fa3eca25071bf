/**
 * `npm ci` (README Quick start) runs `npm run build:ui`, i.e. `vite build --logLevel warn`: a
 * newcomer's install should end without a build warning. It printed
 * "[INEFFECTIVE_DYNAMIC_IMPORT] node_modules/yaml/browser/index.js is dynamically imported by
 * ui/src/components/code-editor.tsx but also statically imported by …/config-editor.tsx".
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/build.ts';

const ROOT = path.join(import.meta.dirname, '..', '..');

test('the UI build as npm ci runs it (log level warn) prints no warning', async (t) => {
  t.timeout(600_000);
  const outDir = path.join(await tempDir(t, 'sm-ui-warn-'), 'dist');
  const vite = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const args = [vite, 'build', '--config', path.join(ROOT, 'ui', 'vite.config.ts'), '--logLevel', 'warn'];
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [...args, '--outDir', outDir, '--emptyOutDir'],
    {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: '1' },
    },
  );
  t.is(`${stdout}${stderr}`.trim(), '');
});
