/**
 * No source or test file names a path of one particular machine (issue 12 item 8): a CI runner
 * with only `../shared` next to the checkout must run every test. Fixtures are found through
 * test/helpers/shared.ts (SHARED, fixture()).
 */
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TREES = ['test', 'bench', 'core', 'model', 'plugins'];
// built from parts so this file does not match itself
const HOMES = ['work', 'home', 'root', 'Users'].map((dir) => `/${dir}/`);
const ABSOLUTE = new RegExp(`['"\`](?:${HOMES.map((h) => h.replaceAll('/', '\\/')).join('|')})`);

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await sourceFiles(full)));
    else if (/\.(ts|js|mjs|cjs|sh|json|ya?ml)$/.test(entry.name)) files.push(full);
  }
  return files;
}

test('no file in test/, bench/, core/, model/ or plugins/ hard-codes an absolute machine path', async (t) => {
  const offenders: string[] = [];
  let scanned = 0;
  for (const tree of TREES) {
    for (const file of await sourceFiles(path.join(ROOT, tree))) {
      scanned += 1;
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        if (ABSOLUTE.test(line)) offenders.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
  }
  t.true(scanned > 50, 'the scan found the source trees');
  t.deepEqual(offenders, [], 'use SHARED / fixture() from test/helpers/shared.ts instead');
});

test('the pattern catches a hard-coded fixture path', (t) => {
  t.true(ABSOLUTE.test(`const FIXTURES = '${HOMES[0]}shared/fixtures/docker';`));
  t.false(ABSOLUTE.test("const FIXTURES = fixture('docker');"));
});
