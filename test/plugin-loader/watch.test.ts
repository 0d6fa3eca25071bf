/** Hot-reload watcher of PLUGINS_DIR: a burst of changes is reported once, after the quiet time. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import Fastify from 'fastify';
import { tempDir } from '../helpers/build.ts';
import { watchPluginsDir } from '../../core/plugin-loader/index.ts';

test('a burst of changes in PLUGINS_DIR is reported once with every changed path', async (t) => {
  const dir = await tempDir(t, 'sm-watch-');
  const bursts: string[][] = [];
  let reported!: () => void;
  const firstBurst = new Promise<void>((resolve) => {
    reported = resolve;
  });
  const watcher = await watchPluginsDir({
    dir,
    logger: Fastify({ logger: false }).log,
    debounceMs: 1000,
    onChange: (paths) => {
      bursts.push(paths);
      reported();
    },
  });
  t.teardown(() => watcher.close());

  await mkdir(path.join(dir, 'hello'));
  await writeFile(path.join(dir, 'hello', 'plugin.yaml'), 'name: hello\n');
  await writeFile(path.join(dir, 'hello', 'index.mjs'), 'export default async () => {};\n');
  await writeFile(path.join(dir, '.hidden'), 'ignored\n');
  await firstBurst;
  t.is(bursts.length, 1);
  t.true(bursts[0].includes(path.join(dir, 'hello', 'index.mjs')));
  t.false(bursts[0].some((p) => p.endsWith('.hidden')));
});

test('a missing PLUGINS_DIR is not watched and closing is harmless', async (t) => {
  const dir = path.join(await tempDir(t, 'sm-watch-'), 'absent');
  const watcher = await watchPluginsDir({
    dir,
    logger: Fastify({ logger: false }).log,
    onChange: () => t.fail('no change expected'),
  });
  await watcher.close();
  t.pass();
});
