import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.join(import.meta.dirname, '..');

test('the whole project type-checks (tsc --noEmit, strict)', async (t) => {
  t.timeout(180_000);
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '--noEmit', '-p', root], { cwd: root }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  t.is(result, '', result);
});
