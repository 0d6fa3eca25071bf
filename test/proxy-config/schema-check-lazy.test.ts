/** The provider's schema check compiles on its first use; a schema that cannot be compiled warns, it never throws. */
import test from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createSchemaChecker } from '../../plugins/proxy-config/schema-check.ts';
import { tempDir } from '../helpers/build.ts';

test('an unreadable or broken schema gives one warning per check instead of an exception', async (t) => {
  const dir = await tempDir(t);
  const broken = path.join(dir, 'broken.json');
  await writeFile(broken, '{"type": ');
  // creating the checker reads nothing: a broken file is found on the first check
  const check = createSchemaChecker(broken, { memo: true });
  const warnings = check({ http: {} });
  t.is(warnings.length, 1);
  t.is(warnings[0]!.path, '');
  t.regex(warnings[0]!.message, /broken\.json could not be compiled/);
  t.deepEqual(check({ http: {} }), warnings);
  const missing = createSchemaChecker(path.join(dir, 'missing.json'));
  t.regex(missing({})[0]!.message, /missing\.json could not be compiled: ENOENT/);
});
