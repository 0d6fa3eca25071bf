/** backup events (class O) and object events with source restore; who sees class-O events. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { Type } from '@sinclair/typebox';
import { buildBackupApp, middleware } from '../backups/support.ts';
import { waitFor } from '../helpers/wait.ts';
import { dataOf, listen, stream } from './support.ts';

test('backup create, restore and delete publish backup events; the restore publishes object events with source restore', async (t) => {
  const { app, dataDir } = await buildBackupApp(t, { upstream: true });
  const client = await stream(t, `${await listen(app)}/api/events?types=backup,object`);
  await waitFor(() => client.lastEventId, 5000);
  t.is(
    (await app.inject({ method: 'POST', url: '/api/middlewares', payload: middleware('alpha', 10) })).statusCode,
    201,
  );
  const backup = (await app.inject({ method: 'POST', url: '/api/backup/create' })).json();
  await client.next((e) => e.event === 'backup');
  t.deepEqual(dataOf(client, 'backup'), [{ id: backup.id, action: 'created' }]);

  t.is((await app.inject({ method: 'DELETE', url: '/api/middlewares/alpha' })).statusCode, 204);
  await writeFile(
    path.join(dataDir, 'middlewares', 'beta.yaml'),
    'name: Beta\ntype: rateLimit\nconfig:\n  average: 4\n',
  );
  await client.next((e) => e.event === 'object' && JSON.parse(e.data).id === 'beta');
  const restored = await app.inject({ method: 'POST', url: '/api/backup/restore', payload: { backup_id: backup.id } });
  t.is(restored.statusCode, 200, restored.body);
  const safety = restored.json().safety_backup;
  await client.next((e) => e.event === 'backup' && JSON.parse(e.data).action === 'restored');
  const fromRestore = dataOf(client, 'object').filter((d) => d.source === 'restore');
  t.true(
    fromRestore.some((d) => d.id === 'alpha' && d.action === 'created'),
    JSON.stringify(fromRestore),
  );
  t.true(
    fromRestore.some((d) => d.id === 'beta' && d.action === 'deleted'),
    JSON.stringify(fromRestore),
  );
  t.false(
    dataOf(client, 'object').some((d) => d.source === 'file' && d.id === 'alpha'),
    'a restore is not reported as a hand edit',
  );

  t.is((await app.inject({ method: 'DELETE', url: `/api/backup/${safety}` })).statusCode, 204);
  await client.next((e) => e.event === 'backup' && JSON.parse(e.data).action === 'deleted');
  t.deepEqual(dataOf(client, 'backup'), [
    { id: backup.id, action: 'created' },
    { id: safety, action: 'created' },
    { id: backup.id, action: 'restored' },
    { id: safety, action: 'deleted' },
  ]);
});

test('auth mode ops: a stream without a token gets configuration events only; with a token (header or access_token) also class-O events', async (t) => {
  const { app } = await buildBackupApp(t, { config: { auth: { mode: 'ops' } } });
  const created = await app.auth.create('ui-viewer', 'viewer');
  if (created === 'exists') throw new Error('token exists');
  const operator = await app.auth.create('ui-operator', 'operator');
  if (operator === 'exists') throw new Error('token exists');
  const base = await listen(app);
  const anonymous = await stream(t, `${base}/api/events`);
  const viaHeader = await stream(t, `${base}/api/events`, { authorization: `Bearer ${created.token}` });
  const viaQuery = await stream(t, `${base}/api/events?access_token=${encodeURIComponent(created.token)}`);
  t.is(anonymous.status, 200);
  t.is(viaHeader.status, 200);
  t.is(viaQuery.status, 200);
  for (const client of [anonymous, viaHeader, viaQuery]) await waitFor(() => client.lastEventId, 5000);

  const backup = await app.inject({
    method: 'POST',
    url: '/api/backup/create',
    headers: { authorization: `Bearer ${operator.token}` },
  });
  t.is(backup.statusCode, 201);
  app.events.publish('upstream', { source: 'pangolin', state: 'ok', message: 'marker' });
  for (const client of [anonymous, viaHeader, viaQuery]) await client.next((e) => e.event === 'upstream');
  await viaHeader.next((e) => e.event === 'backup');
  await viaQuery.next((e) => e.event === 'backup');
  t.deepEqual(
    anonymous.events.map((e) => e.event),
    ['upstream'],
    'no backup event without a token',
  );
  t.deepEqual(
    viaHeader.events.map((e) => e.event),
    ['backup', 'upstream'],
  );

  // a token that is wrong is refused rather than silently downgraded
  const wrong = await stream(t, `${base}/api/events?access_token=nope`);
  t.is(wrong.status, 401);
});

test('auth mode all: the stream needs a token; access_token works for EventSource; mode off shows every event', async (t) => {
  const { app } = await buildBackupApp(t, { config: { auth: { mode: 'all' } } });
  const viewer = await app.auth.create('ui-viewer', 'viewer');
  if (viewer === 'exists') throw new Error('token exists');
  const base = await listen(app);
  t.is((await stream(t, `${base}/api/events`)).status, 401);
  const client = await stream(t, `${base}/api/events?types=backup&access_token=${viewer.token}`);
  t.is(client.status, 200);
  await waitFor(() => client.lastEventId, 5000);
  app.events.publish('backup', { id: 'backup-x', action: 'created' });
  t.deepEqual(JSON.parse((await client.next(() => true)).data), { id: 'backup-x', action: 'created' });
  // the access_token query is accepted on this streaming route only
  t.is((await app.inject({ method: 'GET', url: `/api/backup/list?access_token=${viewer.token}` })).statusCode, 401);

  const off = await buildBackupApp(t, { config: { auth: { mode: 'off' } } });
  const open = await stream(t, `${await listen(off.app)}/api/events?types=backup`);
  await waitFor(() => open.lastEventId, 5000);
  off.app.events.publish('backup', { id: 'backup-y', action: 'deleted' });
  t.is(JSON.parse((await open.next(() => true)).data).id, 'backup-y');
});

test('auth mode ops: object events of third-party plugin data (ext/<name>, class O) go to token holders only', async (t) => {
  const { app } = await buildBackupApp(t, { config: { auth: { mode: 'ops' } } });
  const viewer = await app.auth.create('ext-viewer', 'viewer');
  if (viewer === 'exists') throw new Error('token exists');
  const base = await listen(app);
  const anonymous = await stream(t, `${base}/api/events?types=object`);
  const holder = await stream(t, `${base}/api/events?types=object`, { authorization: `Bearer ${viewer.token}` });
  for (const client of [anonymous, holder]) await waitFor(() => client.lastEventId, 5000);
  const ext = await app.store.collection<{ value: number }>({
    name: 'ext/hello',
    schema: Type.Object({ value: Type.Number() }),
  });
  await ext.put('greeting', { value: 1 });
  t.is(
    (await app.inject({ method: 'POST', url: '/api/middlewares', payload: middleware('marker', 1) })).statusCode,
    201,
  );
  for (const client of [anonymous, holder]) await client.next((e) => JSON.parse(e.data).id === 'marker');
  t.deepEqual(
    dataOf(holder, 'object').map((d) => `${d.collection}/${d.id}`),
    ['ext/hello/greeting', 'middlewares/marker'],
  );
  t.deepEqual(
    dataOf(anonymous, 'object').map((d) => `${d.collection}/${d.id}`),
    ['middlewares/marker'],
  );
});
