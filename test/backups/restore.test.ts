import test from 'ava';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { waitFor } from '../helpers/wait.ts';
import { assertClientError, backupFiles, buildBackupApp, call, middleware, snapshot } from './support.ts';

const ids = async (app: FastifyInstance, url: string) =>
  (await call(app, { method: 'GET', url })).body.map((o: { id?: string; name?: string }) => o.id ?? o.name);

/** The middlewares of the generated config. */
async function providerMiddlewares(app: FastifyInstance): Promise<Record<string, any>> {
  const response = await app.inject({ url: '/api/proxy-config' });
  return JSON.parse(response.body).http?.middlewares ?? {};
}

test('restore round trip: changed and deleted middlewares come back, the API and GET /api/proxy-config show them, a pre-restore backup holds the state before', async (t) => {
  const { app, dataDir, backupDir } = await buildBackupApp(t, { upstream: true });
  t.is((await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('alpha', 10) })).status, 201);
  t.is((await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('beta', 20) })).status, 201);
  const backup = (await call(app, { method: 'POST', url: '/api/backup/create' })).body;
  const alphaBytes = await readFile(path.join(dataDir, 'middlewares', 'alpha.yaml'));

  t.is(
    (
      await call(app, {
        method: 'PUT',
        url: '/api/middlewares/alpha',
        payload: { ...middleware('alpha', 999), name: 'Changed' },
      })
    ).status,
    200,
  );
  t.is((await call(app, { method: 'DELETE', url: '/api/middlewares/beta' })).status, 204);
  t.is((await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('gamma', 30) })).status, 201);
  await waitFor(async () => 'gamma' in (await providerMiddlewares(app)), 5000);

  const restored = await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: backup.id } });
  t.is(restored.status, 200, JSON.stringify(restored.body));
  t.is(restored.body.restored, backup.id);
  t.regex(restored.body.safety_backup, /^backup-\d{8}T\d{6}Z-pre-restore(-\d+)?$/);
  t.is(restored.body.files, backup.files, 'every data file (no auth/ in this backup)');

  t.deepEqual(await ids(app, '/api/middlewares'), ['alpha', 'beta']);
  const alpha = (await call(app, { method: 'GET', url: '/api/middlewares/alpha' })).body;
  t.like(alpha, { name: 'Limit alpha', config: { average: 10, burst: 50 } });
  t.true(
    (await readFile(path.join(dataDir, 'middlewares', 'alpha.yaml'))).equals(alphaBytes),
    'the file is byte-identical to the backed-up one',
  );
  const generated = await providerMiddlewares(app);
  t.deepEqual(generated.alpha, { rateLimit: { average: 10, burst: 50 } });
  t.deepEqual(generated.beta, { rateLimit: { average: 20, burst: 50 } });
  t.false('gamma' in generated);

  const list = (await call(app, { method: 'GET', url: '/api/backup/list' })).body;
  const safety = list.find((b: { id: string }) => b.id === restored.body.safety_backup);
  t.like(safety, { kind: 'pre-restore', note: `before restoring ${backup.id}` });
  t.deepEqual((await readdir(path.dirname(dataDir))).sort(), ['backups', 'data'], 'staging and trash dirs are gone');
  t.is((await backupFiles(backupDir)).length, 2);

  // the pre-restore backup holds the state just before: restoring it brings gamma back
  t.is(
    (await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: safety.id } })).status,
    200,
  );
  t.deepEqual(await ids(app, '/api/middlewares'), ['alpha', 'gamma']);
  t.is((await call(app, { method: 'GET', url: '/api/middlewares/alpha' })).body.config.average, 999);

  // hand edits after a restore are still picked up (the watcher follows the new tree)
  await writeFile(
    path.join(dataDir, 'middlewares', 'delta.yaml'),
    'name: Delta\ntype: rateLimit\nconfig:\n  average: 4\n',
  );
  await waitFor(async () => (await ids(app, '/api/middlewares')).includes('delta'), 10_000);
  await waitFor(async () => 'delta' in (await providerMiddlewares(app)), 10_000);
});

test('auth/ is kept unless restore_tokens is true', async (t) => {
  const { app } = await buildBackupApp(t);
  const token = (name: string) =>
    call(app, { method: 'POST', url: '/api/auth/tokens', payload: { name, role: 'admin' } });
  t.is((await token('before')).status, 201);
  const backup = (await call(app, { method: 'POST', url: '/api/backup/create' })).body;
  t.is((await token('after')).status, 201);

  const kept = await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: backup.id } });
  t.is(kept.status, 200);
  t.is(kept.body.files, backup.files - 1, 'auth/tokens.yaml is not put in place');
  t.deepEqual(await ids(app, '/api/auth/tokens'), ['after', 'before']);

  const replaced = await call(app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: backup.id, restore_tokens: true },
  });
  t.is(replaced.status, 200);
  t.is(replaced.body.files, backup.files);
  t.deepEqual(await ids(app, '/api/auth/tokens'), ['before']);
});

test('a failure during the swap moves everything back: the data dir is byte-identical and the API unchanged', async (t) => {
  let failOn: string | null = null;
  const { app, dataDir } = await buildBackupApp(t, {
    backupOptions: {
      fileOps: {
        rename: async (from, to) => {
          if (failOn && to === failOn) {
            failOn = null; // once: the rollback's own renames go through
            throw Object.assign(new Error('injected rename failure'), { code: 'EIO' });
          }
          await rename(from, to);
        },
      },
    },
  });
  await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('alpha', 10) });
  await call(app, {
    method: 'POST',
    url: '/api/services',
    payload: { id: 'web', name: 'Web', type: 'loadBalancer', config: { servers: [{ url: 'http://127.0.0.1:8080' }] } },
  });
  const backup = (await call(app, { method: 'POST', url: '/api/backup/create' })).body;
  await call(app, { method: 'DELETE', url: '/api/middlewares/alpha' });
  await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('after', 5) });
  await app.store.settle();
  const before = await snapshot(dataDir);

  // the incoming `services` dir is the last to move in: by then every current item sits in the trash
  failOn = path.join(dataDir, 'services');
  const failed = await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: backup.id } });
  t.is(failed.status, 500);
  t.is(failed.body.id, 'internal');
  t.deepEqual(await snapshot(dataDir), before);
  t.deepEqual(await ids(app, '/api/middlewares'), ['after']);
  t.deepEqual((await readdir(path.dirname(dataDir))).sort(), ['backups', 'data']);

  t.is(
    (await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: backup.id } })).status,
    200,
    'the same restore works once renames do',
  );
  t.deepEqual(await ids(app, '/api/middlewares'), ['alpha']);
});

test('include_extra writes back only the extra files whose path is still in backup.include', async (t) => {
  const first = await buildBackupApp(t, { backup: { include: [] } });
  const etc = path.join(first.root, 'etc');
  await mkdir(etc);
  const kept = path.join(etc, 'traefik.yml');
  const dropped = path.join(etc, 'compose.yml');
  const gone = path.join(etc, 'missing.yml');
  await writeFile(kept, 'entryPoints: {}\n', { mode: 0o640 });
  await writeFile(dropped, 'services: {}\n');
  await first.app.close();

  const withBoth = await buildBackupApp(t, { root: first.root, backup: { include: [kept, dropped, gone] } });
  const backup = (await call(withBoth.app, { method: 'POST', url: '/api/backup/create' })).body;
  const manifest = (await import('../../plugins/backup/archive-read.ts')).readManifestHead(
    path.join(withBoth.backupDir, backup.file),
  );
  t.deepEqual(
    (await manifest)?.extra,
    [
      { path: 'extra/1-traefik.yml', original_path: kept },
      { path: 'extra/2-compose.yml', original_path: dropped },
    ],
    'an unreadable path is left out',
  );
  await withBoth.app.close();
  await writeFile(kept, 'changed: true\n');
  await writeFile(dropped, 'changed: true\n');

  const onlyKept = await buildBackupApp(t, { root: first.root, backup: { include: [kept] } });
  const plain = await call(onlyKept.app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: backup.id },
  });
  t.is(plain.status, 200);
  t.is(
    await readFile(kept, 'utf8'),
    'changed: true\n',
    'without include_extra nothing outside the data dir is written',
  );
  const withExtra = await call(onlyKept.app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: backup.id, include_extra: true },
  });
  t.is(withExtra.status, 200);
  t.is(withExtra.body.files, plain.body.files + 1);
  t.is(await readFile(kept, 'utf8'), 'entryPoints: {}\n');
  t.is((await stat(kept)).mode & 0o777, 0o640);
  t.is(await readFile(dropped, 'utf8'), 'changed: true\n', 'no longer in backup.include: left alone');
});

test('an extra file that cannot be written back rolls the data swap back too', async (t) => {
  const first = await buildBackupApp(t);
  const target = path.join(first.root, 'static.yml');
  await writeFile(target, 'v: 1\n');
  await first.app.close();
  const { app, dataDir } = await buildBackupApp(t, { root: first.root, backup: { include: [target] } });
  await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('alpha') });
  const backup = (await call(app, { method: 'POST', url: '/api/backup/create' })).body;
  await call(app, { method: 'DELETE', url: '/api/middlewares/alpha' });
  await app.store.settle();
  // the original path is now a non-empty directory: renaming a file over it fails
  await rm(target);
  await mkdir(path.join(target, 'inside'), { recursive: true });
  const before = await snapshot(dataDir);
  const failed = await call(app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: backup.id, include_extra: true },
  });
  t.is(failed.status, 500);
  t.deepEqual(await snapshot(dataDir), before);
  t.deepEqual(await ids(app, '/api/middlewares'), []);
  t.true((await stat(target)).isDirectory());
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: 'backup-20000101T000000Z' } }),
    404,
    'not_found',
  );
});

test('a data dir of 2,000 files round-trips byte for byte', async (t) => {
  const { app, dataDir } = await buildBackupApp(t);
  const bulk = path.join(dataDir, 'ext', 'bulk');
  await mkdir(bulk, { recursive: true });
  await Promise.all(
    Array.from({ length: 2000 }, (_, i) =>
      writeFile(path.join(bulk, `item-${i}.yaml`), `value: ${i}\npad: ${'x'.repeat(i % 300)}\n`),
    ),
  );
  await app.store.settle();
  const before = await snapshot(dataDir);
  const backup = (await call(app, { method: 'POST', url: '/api/backup/create' })).body;
  t.true(backup.files >= 2000);
  await rm(bulk, { recursive: true });
  await writeFile(path.join(dataDir, 'ext', 'stray.yaml'), 'a: 1\n');
  const restored = await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: backup.id } });
  t.is(restored.status, 200, JSON.stringify(restored.body));
  t.deepEqual(await snapshot(dataDir), before);
});
