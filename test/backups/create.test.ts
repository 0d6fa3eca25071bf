import test from 'ava';
import { Writable } from 'node:stream';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { list as listTar } from 'tar';
import { assertClientError, backupFiles, buildBackupApp, call, middleware, sha256 } from './support.ts';
import { readManifestHead } from '../../plugins/backup/archive-read.ts';

const ID = /^backup-\d{8}T\d{6}Z(-[a-z0-9-]{1,40})?$/;

/** The app's JSON log lines, parsed, as they are written. */
function captureLogs(): { lines: Record<string, any>[]; logStream: Writable } {
  const lines: Record<string, any>[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logStream };
}

/** Entry paths and types of an archive, via tar's own lister. */
async function entriesOf(file: string): Promise<{ path: string; type: string }[]> {
  const entries: { path: string; type: string }[] = [];
  await listTar({
    file,
    onReadEntry: (entry) => {
      entries.push({ path: entry.path, type: entry.type });
    },
  });
  return entries;
}

test('POST /api/backup/create writes a 0600 archive named by the UTC second, with a manifest of SHA-256s and without audit.log, .cache, locks and temp files', async (t) => {
  const now = new Date('2025-01-08T13:27:03.200Z');
  const { app, dataDir, backupDir } = await buildBackupApp(t, { now: () => now });
  t.is((await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('limit') })).status, 201);
  await mkdir(path.join(dataDir, '.cache'), { recursive: true });
  await writeFile(path.join(dataDir, '.cache', 'upstream.json'), '{}');
  await writeFile(path.join(dataDir, 'audit.log.1'), 'old audit\n');
  await writeFile(path.join(dataDir, 'middlewares', '.limit.yaml.abc123.tmp'), 'partial');
  await mkdir(path.join(dataDir, 'services.lock'));
  await writeFile(path.join(dataDir, 'notes.txt'), 'hand-written notes\n');

  const created = await call(app, { method: 'POST', url: '/api/backup/create', payload: { note: 'before upgrade' } });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.is(created.body.id, 'backup-20250108T132703Z');
  t.is(created.headers.location, '/api/backup/backup-20250108T132703Z');
  t.like(created.body, {
    file: 'backup-20250108T132703Z.tar.gz',
    kind: 'manual',
    note: 'before upgrade',
    created_at: '2025-01-08T13:27:03.200Z',
    app_version: '0.1.0',
  });

  const file = path.join(backupDir, created.body.file);
  const info = await stat(file);
  t.is(info.mode & 0o777, 0o600);
  t.is(created.body.size, info.size);
  t.deepEqual(await backupFiles(backupDir), ['backup-20250108T132703Z.tar.gz'], 'no temp file left behind');

  const entries = await entriesOf(file);
  t.is(entries[0].path, 'manifest.json', 'the manifest comes first');
  const paths = entries.map((e) => e.path);
  for (const present of ['data/', 'data/middlewares/limit.yaml', 'data/notes.txt'])
    t.true(paths.includes(present), present);
  for (const absent of ['audit.log', 'audit.log.1', '.cache', '.limit.yaml.abc123.tmp', 'services.lock'])
    t.false(
      paths.some((p) => p.includes(absent)),
      absent,
    );
  t.true(entries.every((e) => e.type === 'File' || e.type === 'Directory'));

  const manifest = await readManifestHead(file);
  t.truthy(manifest);
  t.like(manifest, {
    format: 1,
    kind: 'manual',
    note: 'before upgrade',
    created_at: '2025-01-08T13:27:03.200Z',
    app_version: '0.1.0',
    extra: [],
  });
  const limit = manifest!.files.find((f) => f.path === 'data/middlewares/limit.yaml');
  const bytes = await readFile(path.join(dataDir, 'middlewares', 'limit.yaml'));
  t.deepEqual(limit, { path: 'data/middlewares/limit.yaml', size: bytes.length, sha256: sha256(bytes) });
  t.is(created.body.files, manifest!.files.length);
  t.deepEqual(
    manifest!.files.map((f) => f.path).sort(),
    paths.filter((p) => !p.endsWith('/') && p !== 'manifest.json').sort(),
  );
});

test('backups in the same second get -2, -3; non-manual kinds carry their suffix', async (t) => {
  const now = new Date('2025-02-01T00:00:00.000Z');
  const { app } = await buildBackupApp(t, { now: () => now });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await call(app, { method: 'POST', url: '/api/backup/create' })).body.id);
  t.deepEqual(ids, ['backup-20250201T000000Z', 'backup-20250201T000000Z-2', 'backup-20250201T000000Z-3']);
  await app.backups.runScheduled();
  const list = await call(app, { method: 'GET', url: '/api/backup/list' });
  const scheduled = list.body.find((b: { kind: string }) => b.kind === 'scheduled');
  t.is(scheduled.id, 'backup-20250201T000000Z-scheduled');
  t.regex(scheduled.id, ID);
});

test('a dry run answers 200 with what would be archived and writes nothing', async (t) => {
  const now = new Date('2025-03-01T10:00:00.000Z');
  const { app, backupDir, dataDir } = await buildBackupApp(t, { now: () => now });
  await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('one') });
  const dry = await call(app, { method: 'POST', url: '/api/backup/create', payload: { dry_run: true } });
  t.is(dry.status, 200);
  t.is(dry.headers.location, undefined);
  t.like(dry.body, { dry_run: true, would_create: 'backup-20250301T100000Z' });
  const one = (await stat(path.join(dataDir, 'middlewares', 'one.yaml'))).size;
  t.deepEqual(
    dry.body.entries.find((e: { path: string }) => e.path === 'data/middlewares/one.yaml'),
    { path: 'data/middlewares/one.yaml', size: one },
  );
  t.is(dry.body.files, dry.body.entries.length);
  t.is(
    dry.body.bytes,
    dry.body.entries.reduce((sum: number, e: { size: number }) => sum + e.size, 0),
  );
  t.deepEqual(await backupFiles(backupDir), []);
  await t.throwsAsync(stat(backupDir), { code: 'ENOENT' }, 'not even BACKUP_DIR is created');
});

test('GET /api/backup/list is newest first, with X-Total-Count and Link when paged; GET /:id reads one', async (t) => {
  let now = new Date('2025-04-01T00:00:00.000Z');
  const { app } = await buildBackupApp(t, { now: () => now });
  t.deepEqual((await call(app, { method: 'GET', url: '/api/backup/list' })).body, []);
  const ids: string[] = [];
  for (let day = 1; day <= 3; day++) {
    now = new Date(`2025-04-0${day}T08:00:00.000Z`);
    ids.push((await call(app, { method: 'POST', url: '/api/backup/create', payload: { note: `day ${day}` } })).body.id);
  }
  const all = await call(app, { method: 'GET', url: '/api/backup/list' });
  t.is(all.status, 200);
  t.deepEqual(
    all.body.map((b: { id: string }) => b.id),
    [...ids].reverse(),
  );
  t.is(all.headers['x-total-count'], '3');
  const page = await call(app, { method: 'GET', url: '/api/backup/list?page=2&page_size=1' });
  t.deepEqual(
    page.body.map((b: { id: string }) => b.id),
    [ids[1]],
  );
  t.is(page.headers['x-total-count'], '3');
  t.is(
    page.headers.link,
    '</api/backup/list?page=3&page_size=1>; rel="next", </api/backup/list?page=1&page_size=1>; rel="prev"',
  );
  const one = await call(app, { method: 'GET', url: `/api/backup/${ids[0]}` });
  t.is(one.status, 200);
  t.deepEqual(one.body, all.body[2]);
  t.like(one.body, { note: 'day 1', kind: 'manual', created_at: '2025-04-01T08:00:00.000Z' });
});

test('GET /api/backup/:id/download sends the file bytes as application/gzip with a Content-Disposition', async (t) => {
  const { app, backupDir } = await buildBackupApp(t);
  const { body } = await call(app, { method: 'POST', url: '/api/backup/create' });
  const response = await app.inject({ method: 'GET', url: `/api/backup/${body.id}/download` });
  t.is(response.statusCode, 200);
  t.is(response.headers['content-type'], 'application/gzip');
  t.is(response.headers['content-disposition'], `attachment; filename="${body.id}.tar.gz"`);
  const onDisk = await readFile(path.join(backupDir, body.file));
  t.true(response.rawPayload.equals(onDisk));
  t.is(Number(response.headers['content-length']), onDisk.length);
  const head = await app.inject({ method: 'HEAD', url: `/api/backup/${body.id}/download` });
  t.is(head.statusCode, 200);
  t.is(head.headers['content-type'], 'application/gzip');
});

test('DELETE /api/backup/:id removes the archive; unknown ids answer 404 on every route', async (t) => {
  const { app, backupDir } = await buildBackupApp(t);
  const { body } = await call(app, { method: 'POST', url: '/api/backup/create' });
  const deleted = await app.inject({ method: 'DELETE', url: `/api/backup/${body.id}` });
  t.is(deleted.statusCode, 204);
  t.deepEqual(await backupFiles(backupDir), []);
  const unknown = 'backup-19990101T000000Z';
  assertClientError(t, await call(app, { method: 'GET', url: `/api/backup/${unknown}` }), 404, 'not_found');
  assertClientError(t, await call(app, { method: 'GET', url: `/api/backup/${unknown}/download` }), 404, 'not_found');
  assertClientError(t, await call(app, { method: 'DELETE', url: `/api/backup/${body.id}` }), 404, 'not_found');
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: unknown } }),
    404,
    'not_found',
  );
});

test('while a backup is being written, a second create, a restore, a delete and a cleanup answer 409 busy', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered!: () => void;
  const writing = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const { rename } = await import('node:fs/promises');
  const { app, backupDir } = await buildBackupApp(t, {
    backupOptions: {
      fileOps: {
        rename: async (from, to) => {
          entered();
          await gate;
          await rename(from, to);
        },
      },
    },
  });
  const first = call(app, { method: 'POST', url: '/api/backup/create' });
  await writing; // the first create holds the lock, its archive about to be renamed into place
  const second = await call(app, { method: 'POST', url: '/api/backup/create' });
  assertClientError(t, second, 409, 'busy');
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: 'backup-20200101T000000Z' } }),
    409,
    'busy',
  );
  assertClientError(t, await call(app, { method: 'DELETE', url: '/api/backup/backup-20200101T000000Z' }), 409, 'busy');
  assertClientError(t, await call(app, { method: 'POST', url: '/api/backup/cleanup' }), 409, 'busy');
  t.is(
    (await call(app, { method: 'POST', url: '/api/backup/create', payload: { dry_run: true } })).status,
    200,
    'a dry run writes nothing and is not blocked',
  );
  release();
  const done = await first;
  t.is(done.status, 201);
  t.deepEqual(await backupFiles(backupDir), [done.body.file]);
  t.is((await call(app, { method: 'POST', url: '/api/backup/create' })).status, 201, 'free again once it finished');
});

test('create and restore log their start and end with file counts, bytes and milliseconds', async (t) => {
  const { lines, logStream } = captureLogs();
  const { app } = await buildBackupApp(t, { logStream, config: { log: { level: 'info' } } });
  await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('logged') });
  const backup = (await call(app, { method: 'POST', url: '/api/backup/create' })).body;
  t.is(
    (await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: backup.id } })).status,
    200,
  );
  const find = (msg: string, id?: string) => lines.find((l) => l.msg === msg && (!id || l.backup_id === id));
  t.like(find('backup started', backup.id), { kind: 'manual' });
  const created = find('backup created', backup.id)!;
  t.like(created, { kind: 'manual', files: backup.files, size: backup.size });
  t.true(created.bytes > 0 && Number.isInteger(created.ms));
  t.like(find('restore started', backup.id), { restore_tokens: false, include_extra: false });
  const finished = find('restore finished', backup.id)!;
  t.true(finished.files > 0 && finished.bytes > 0 && Number.isInteger(finished.ms));
  t.regex(finished.safety_backup, /-pre-restore/);
});

test('a backup with more entries than backup.max_restore_entries is warned about at create; restore refuses it until the setting is raised', async (t) => {
  const { lines, logStream } = captureLogs();
  const small = await buildBackupApp(t, {
    logStream,
    config: { log: { level: 'info' } },
    backup: { max_restore_entries: 100 },
  });
  for (let i = 0; i < 100; i++)
    t.is(
      (await call(small.app, { method: 'POST', url: '/api/middlewares', payload: middleware(`m${i}`) })).status,
      201,
    );
  const backup = (await call(small.app, { method: 'POST', url: '/api/backup/create' })).body;
  const entries = (await entriesOf(path.join(small.backupDir, backup.file))).length;
  t.true(entries > 100);
  const warning = lines.find((l) => l.level === 40 && l.backup_id === backup.id);
  t.like(warning, { entries, max_restore_entries: 100 });
  t.regex(warning!.msg, /BACKUP_MAX_RESTORE_ENTRIES/);
  const refused = await call(small.app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: backup.id },
  });
  t.is(refused.status, 422);
  t.is(refused.body.id, 'invalid_archive');
  t.regex(refused.body.details[0].message, /more than 100 entries \(backup\.max_restore_entries\)/);
  await small.app.close();
  // the same data and backup dirs, with the limit raised: the backup restores
  const raised = await buildBackupApp(t, { root: small.root, backup: { max_restore_entries: entries } });
  const restored = await call(raised.app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: backup.id },
  });
  t.is(restored.status, 200, JSON.stringify(restored.body));
  t.is((await call(raised.app, { method: 'GET', url: '/api/middlewares?page_size=1000' })).body.length, 100);
});

test('the OpenAPI document describes the backup routes', async (t) => {
  const { app } = await buildBackupApp(t);
  const doc = (await call(app, { method: 'GET', url: '/api/openapi.json' })).body;
  for (const route of [
    '/api/backup/list',
    '/api/backup/{id}',
    '/api/backup/{id}/download',
    '/api/backup/create',
    '/api/backup/restore',
    '/api/backup/cleanup',
  ])
    t.truthy(doc.paths[route], route);
  t.truthy(doc.paths['/api/backup/create'].post.responses['201']);
  t.truthy(doc.paths['/api/backup/{id}'].delete.responses['204']);
});
