/**
 * storage.reconcile_ms (env DATA_RECONCILE_MS): the period of the store's stat reconcile under the
 * inotify watcher, validated with the other settings and handed to the store by buildApp.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FSWatcher } from 'chokidar';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig } from '../../core/config/load.ts';
import { logCapture } from '../auth/support.ts';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';

const noLocal = { CONFIG_FILE: path.join(import.meta.dirname, '..', 'helpers', 'empty.yaml') };

/** The store's private parts this test looks at. */
interface StoreInside {
  options: { reconcileMs?: number };
  reconcileTimer?: NodeJS.Timeout;
  watcher: FSWatcher | null;
  recheckTimers: Set<NodeJS.Timeout>;
}
const inside = (app: FastifyInstance) => app.store as unknown as StoreInside;

test('DATA_RECONCILE_MS sets storage.reconcile_ms: default 10000, 0 = off, under 100 refused', (t) => {
  t.is(loadConfig({ env: noLocal }).storage.reconcile_ms, 10_000);
  t.is(loadConfig({ env: { ...noLocal, DATA_RECONCILE_MS: '2500' } }).storage.reconcile_ms, 2500);
  t.is(loadConfig({ env: { ...noLocal, DATA_RECONCILE_MS: '0' } }).storage.reconcile_ms, 0);
  for (const bad of ['50', '3600001', 'often', '-1']) {
    const err = t.throws(() => loadConfig({ env: { ...noLocal, DATA_RECONCILE_MS: bad } }), {
      instanceOf: ConfigError,
    });
    t.is(err?.key, 'storage.reconcile_ms', bad);
    t.is(err?.exitCode, 78);
  }
});

test('storage.reconcile_ms reaches the store: an edit the watcher never reported is taken in by the reconcile', async (t) => {
  const logs = logCapture();
  const dataDir = path.join(await tempDir(t), 'data');
  // `storage` is replaced whole by an override: data_dir goes with it
  const app = await build(t, {
    dataDir,
    config: { auth: { mode: 'off' }, log: { level: 'info' }, storage: { data_dir: dataDir, reconcile_ms: 300 } },
    logStream: logs.stream,
  });
  t.is(inside(app).options.reconcileMs, 300);
  t.truthy(inside(app).reconcileTimer, 'the reconcile timer runs');
  const created = await app.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: { name: 'Quota', type: 'rateLimit', config: { average: 10, burst: 5 } },
  });
  t.is(created.statusCode, 201, created.body);
  // the watcher starts a second after ready; then it loses every event (closed), as a lost inotify event would
  const watcher = await waitFor(() => inside(app).watcher, 1000);
  await app.store.settle();
  // and the re-read that follows our own write (RECHECK_AFTER_WRITE_MS later) has run: an edit before
  // it would be taken in by it, not by the reconcile (a clean-clone CI run at load 9 saw exactly that)
  await waitFor(() => inside(app).recheckTimers.size === 0, 2000);
  await app.store.settle();
  await watcher.close();

  const file = path.join(app.store.dataDir, 'middlewares', 'quota.yaml');
  await writeFile(`${file}.edit`, (await readFile(file, 'utf8')).replace('average: 10', 'average: 77'));
  await rename(`${file}.edit`, file);
  const started = Date.now();
  const average = async () =>
    (await app.inject({ url: '/api/middlewares/quota' })).json<{ config: { average: number } }>().config.average;
  await waitFor(async () => (await average()) === 77, 300);
  t.log(`taken in after ${Date.now() - started} ms (reconcile every 300 ms; the default is 10 s)`);
  t.true(logs.text().includes('changed without a watcher event'), 'the reconcile, not the watcher, found it');
});

test('storage.reconcile_ms 0 turns the reconcile off', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const app = await build(t, { dataDir, config: { storage: { data_dir: dataDir, reconcile_ms: 0 } } });
  t.is(inside(app).options.reconcileMs, 0);
  t.is(inside(app).reconcileTimer, undefined);
});
