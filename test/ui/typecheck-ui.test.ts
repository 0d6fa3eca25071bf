/** The UI type-checks against the generated API types with its own tsconfig (DOM, Preact JSX). */
import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.join(import.meta.dirname, '..', '..');

test('ui/ type-checks (tsc -p ui, strict)', async (t) => {
  t.timeout(300_000);
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', path.join(root, 'ui')], {
    cwd: root,
  }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  t.is(result, '', result);
});
