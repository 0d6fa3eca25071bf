import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pinTickObjectShape } from '../../core/tick-shape.ts';
import { tempDir } from '../helpers/build.ts';

const probe = path.join(import.meta.dirname, '..', 'fixtures', 'tick-shape-probe.ts');

/** The IC states V8 prints for the computed-key object literal in `process.nextTick`. */
async function literalStates(t: ExecutionContext, mode: 'pin' | 'nopin'): Promise<string[]> {
  // %DebugPrint writes with C stdio: into a pipe (non-blocking in the child) a slow reader loses
  // most of it, so the child writes into a file
  const out = path.join(await tempDir(t), 'debug-print.txt');
  const file = await open(out, 'w');
  const child = spawn(process.execPath, ['--expose-gc', '--allow-natives-syntax', '--import=tsx', probe, mode], {
    stdio: ['ignore', file.fd, 'inherit'],
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  await file.close();
  t.is(code, 0);
  return [...(await readFile(out, 'utf8')).matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);
}

test('the kept object is a tick object and the same one on every call', async (t) => {
  const first = await pinTickObjectShape();
  t.is(await pinTickObjectShape(), first);
  const keys = Reflect.ownKeys(first).map(String);
  t.true(keys.includes('callback') && keys.includes('args'), keys.join(','));
  t.true(keys.includes('Symbol(async_id_symbol)'), keys.join(','));
});

test("full GCs between nextTicks leave nextTick's literal monomorphic while a tick object is kept", async (t) => {
  const [pinned, unpinned] = await Promise.all([literalStates(t, 'pin'), literalStates(t, 'nopin')]);
  // the literal has four properties (Node 20) or more; every one of them keeps its single map
  t.true(pinned.length >= 4, `V8 printed ${pinned.length} literal slots`);
  t.deepEqual(
    pinned.filter((state) => state !== 'MONOMORPHIC'),
    [],
    pinned.join(' '),
  );
  // the control: without the kept object the same run turns it megamorphic (if a future V8 stops
  // doing that, core/tick-shape.ts can go)
  t.true(unpinned.includes('MEGAMORPHIC'), unpinned.join(' '));
});
