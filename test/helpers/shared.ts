// test/helpers/shared.ts
import path from 'node:path';
import { existsSync } from 'node:fs';
// ava keeps the caller's cwd, and tests may run from dist/: walk up to package.json
let root = import.meta.dirname;
while (!existsSync(path.join(root, 'package.json'))) root = path.dirname(root);
export const SHARED = process.env.STACK_SHARED_DIR ?? path.resolve(root, '../shared');
export const fixture = (...p: string[]) => path.join(SHARED, 'fixtures', ...p);
