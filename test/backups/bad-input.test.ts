import test from 'ava';
import { stat } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { assertClientError, backupFiles, buildBackupApp, call, snapshot } from './support.ts';

const json = (app: FastifyInstance, url: string, payload: string, contentType = 'application/json') =>
  call(app, { method: 'POST', url, payload, headers: { 'content-type': contentType } });

test('bad bodies for create and restore answer 4xx {id, message} and write nothing', async (t) => {
  const { app, backupDir, dataDir } = await buildBackupApp(t);
  await app.store.settle();
  const before = await snapshot(dataDir);

  assertClientError(t, await json(app, '/api/backup/create', '{"note": '), 400, 'invalid_json');
  assertClientError(t, await json(app, '/api/backup/create', 'note=x', 'text/plain'), 415, 'unsupported_media_type');
  assertClientError(t, await json(app, '/api/backup/create', '[1, 2]'), 422, 'validation_failed');
  const long = await json(app, '/api/backup/create', JSON.stringify({ note: 'n'.repeat(201) }));
  assertClientError(t, long, 422, 'validation_failed');
  t.is(long.body.details[0].path, '/note');
  assertClientError(
    t,
    await json(app, '/api/backup/create', JSON.stringify({ dry_run: 'maybe' })),
    422,
    'validation_failed',
  );
  assertClientError(
    t,
    await json(app, '/api/backup/create', JSON.stringify({ note: { text: 'x' } })),
    422,
    'validation_failed',
  );

  assertClientError(t, await json(app, '/api/backup/restore', '{'), 400, 'invalid_json');
  const missing = await call(app, { method: 'POST', url: '/api/backup/restore' });
  assertClientError(t, missing, 422, 'validation_failed');
  t.is(missing.body.details[0].path, '/backup_id');
  for (const backup_id of ['nope', 'backup-2025', '../../etc/passwd', 'backup-20250101T000000Z/../x', 12]) {
    const bad = await json(app, '/api/backup/restore', JSON.stringify({ backup_id }));
    assertClientError(t, bad, 422, 'validation_failed');
    t.is(bad.body.details[0].path, '/backup_id', String(backup_id));
  }
  assertClientError(
    t,
    await json(
      app,
      '/api/backup/restore',
      JSON.stringify({ backup_id: 'backup-20250101T000000Z', restore_tokens: 'yes' }),
    ),
    422,
    'validation_failed',
  );
  assertClientError(
    t,
    await json(app, '/api/backup/restore', JSON.stringify({ backup_id: 'backup-20250101T000000Z', include_extra: [] })),
    422,
    'validation_failed',
  );

  await t.throwsAsync(stat(backupDir), { code: 'ENOENT' });
  t.deepEqual(await backupFiles(backupDir), []);
  await app.store.settle();
  t.deepEqual(await snapshot(dataDir), before);
});

test('path ids that fail the pattern answer 422 on /params/id; paging out of range 422', async (t) => {
  const { app } = await buildBackupApp(t);
  for (const [method, url] of [
    ['GET', '/api/backup/backup-1'],
    ['GET', '/api/backup/x/download'],
    ['DELETE', '/api/backup/backup-20250101T000000Z-UPPER'],
    ['GET', '/api/backup/backup-20250101T000000Z..'],
  ] as const) {
    const response = await call(app, { method, url });
    assertClientError(t, response, 422, 'validation_failed');
    t.is(response.body.details[0].path, '/params/id', url);
  }
  assertClientError(t, await call(app, { method: 'GET', url: '/api/backup/list?page=0' }), 422, 'validation_failed');
  assertClientError(
    t,
    await call(app, { method: 'GET', url: '/api/backup/list?page_size=1001' }),
    422,
    'validation_failed',
  );
});

test('backup routes are class O: a token is needed in ops mode, viewers may only read', async (t) => {
  const { app } = await buildBackupApp(t, { config: { auth: { mode: 'ops' } } });
  assertClientError(t, await call(app, { method: 'GET', url: '/api/backup/list' }), 401, 'auth_failed');
  const admin = (await app.auth.create('ops-admin', 'admin')) as { token: string };
  const viewer = (await app.auth.create('ops-viewer', 'viewer')) as { token: string };
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  t.is((await call(app, { method: 'GET', url: '/api/backup/list', headers: as(viewer.token) })).status, 200);
  assertClientError(
    t,
    await call(app, { method: 'POST', url: '/api/backup/create', headers: as(viewer.token) }),
    403,
    'forbidden',
  );
  t.is((await call(app, { method: 'POST', url: '/api/backup/create', headers: as(admin.token) })).status, 201);
});
