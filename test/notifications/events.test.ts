/**
 * What raises a notification (API.md §4.21): events published on the app's real bus become messages
 * with the category and severity the spec lists, filtered per channel by categories and min_severity.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import type { EventType } from '../../plugins/events/index.ts';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { addChannel, fakeClock, startReceiver, type Receiver } from './support.ts';

const messages = (receiver: Receiver) =>
  receiver.received.map((request) => {
    const body = JSON.parse(request.body) as { category: string; severity: string; title: string };
    return `${body.category} ${body.severity} ${body.title}`;
  });

test('bus events → category, severity and title per API.md §4.21; per-channel categories and min_severity', async (t) => {
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  const app: FastifyInstance = await build(t, {
    now: clock.now,
    config: { auth: { mode: 'off' }, notifications: { tick_ms: 20, upstream_down_after_s: 120 } },
  });
  const all = await startReceiver(t);
  const certsOnly = await startReceiver(t);
  await addChannel(app, { name: 'all', type: 'webhook', config: { url: all.url }, min_severity: 'info' });
  await addChannel(app, {
    name: 'certs',
    type: 'webhook',
    config: { url: certsOnly.url },
    categories: ['certs'],
    min_severity: 'error',
  });
  const publish = (type: EventType, data: object) => app.events.publish(type, data);

  publish('live', { resource: 'grafana', state: 'disabled', previous: 'live' });
  publish('live', { resource: 'grafana', state: 'live', previous: 'disabled' });
  publish('live', { resource: 'grafana', state: 'unknown', previous: 'live' });
  const finding = {
    id: 'f1',
    severity: 'warning',
    kind: 'priority_tie',
    message: 'a and b tie',
    fix: 'set a priority',
  };
  publish('diagnosis', { finding, action: 'raised' });
  publish('diagnosis', { finding, action: 'cleared' });
  const job = { id: 'job-1', kind: 'container_update', error: 'health check failed' };
  publish('job', { ...job, status: 'running', steps: [] });
  const rolledBack = { ...job, status: 'failed', steps: [{ step: 'rollback', status: 'ok' }] };
  publish('job', rolledBack);
  publish('job', rolledBack);
  publish('job', { id: 'job-2', kind: 'container_update', status: 'succeeded', steps: [], error: null });
  publish('container', { name: 'traefik', state: 'exited' });
  publish('backup', { id: 'backup-1', action: 'created' });
  publish('invalid_file', { path: 'middlewares/x.yaml', line: 3, column: 1, message: 'bad indentation' });
  publish('invalid_file', { path: 'middlewares/x.yaml', cleared: true });
  publish('object', { collection: 'middlewares', id: 'auth', action: 'updated', source: 'api', etag: 'e' });
  publish('object', { collection: 'resources', id: 'r', action: 'updated', source: 'discovery', etag: 'e' });
  publish('object', { collection: 'notifications', id: 'all', action: 'updated', source: 'api', etag: 'e' });
  const cert = { cn: 'example.com', not_after: '2030-01-03T10:00:00.000Z', source: 'metrics' };
  publish('certificate', { ...cert, days_left: 13, threshold: 14 });
  publish('certificate', { ...cert, days_left: 2, threshold: 3 });

  const expected = [
    'proxy error Resource grafana is no longer live (disabled)',
    'proxy info Resource grafana is live again',
    'proxy warning priority tie',
    'proxy info Cleared: priority tie',
    'containers warning Job container update failed and was rolled back',
    'containers info Job container update done',
    'containers error Container traefik is exited',
    'backups info Backup created: backup-1',
    'config warning Invalid hand edit: middlewares/x.yaml',
    'config info Fixed: middlewares/x.yaml',
    'config info middlewares/auth updated',
    'certs warning Certificate example.com expires in 13 days',
    'certs error Certificate example.com expires in 2 days',
  ];
  await waitFor(() => all.received.length >= expected.length, 500);
  t.deepEqual(messages(all), expected);
  await waitFor(() => certsOnly.received.length >= 1, 500);
  t.deepEqual(messages(certsOnly), ['certs error Certificate example.com expires in 2 days']);
  const diagnosis = JSON.parse(all.received[2].body);
  t.is(diagnosis.message, 'a and b tie\nFix: set a priority');

  // a data source failing for longer than upstream_down_after_s, and its return
  publish('upstream', { source: 'pangolin', state: 'failed', message: 'connect ECONNREFUSED' });
  clock.advance(119_000);
  publish('backup', { id: 'barrier', action: 'created' });
  await waitFor(() => all.received.length === expected.length + 1, 100);
  clock.advance(2_000);
  await waitFor(() => all.received.length === expected.length + 2, 100);
  publish('upstream', { source: 'pangolin', state: 'ok', message: null });
  await waitFor(() => all.received.length === expected.length + 3, 100);
  t.deepEqual(messages(all).slice(expected.length), [
    'backups info Backup created: barrier',
    'proxy error Data source pangolin is unreachable',
    'proxy info Data source pangolin is reachable again',
  ]);
  t.regex(JSON.parse(all.received[expected.length + 1].body).message, /^The upstream pangolin has failed for 121 s: /);
});

test('a scheduled backup that fails raises backups/error with the reason', async (t) => {
  const root = await tempDir(t);
  // the backup dir lies under a regular file: creating it fails (ENOTDIR), also for root
  await writeFile(path.join(root, 'not-a-dir'), 'x');
  const app = await build(t, {
    dataDir: path.join(root, 'data'),
    config: {
      auth: { mode: 'off' },
      backup: { schedule: '1s', dir: path.join(root, 'not-a-dir', 'backups') },
      notifications: { tick_ms: 20 },
    },
  });
  const receiver = await startReceiver(t);
  await addChannel(app, { name: 'ops', type: 'webhook', config: { url: receiver.url }, categories: ['backups'] });
  await waitFor(() => receiver.received.length >= 1, 1_000);
  const body = JSON.parse(receiver.received[0].body);
  t.like(body, { category: 'backups', severity: 'error', title: 'Backup failed (scheduled)' });
  t.regex(body.message, /^The scheduled backup failed: ENOTDIR/);
});

test('a data dir where the queue cannot be saved raises system/error once, and its recovery', async (t) => {
  const root = await tempDir(t);
  const dataDir = path.join(root, 'data');
  await mkdir(dataDir, { recursive: true });
  // the state file's directory is a regular file: every save fails (ENOTDIR/EEXIST), also for root
  await writeFile(path.join(dataDir, '.notifications'), 'in the way');
  const app = await build(t, { dataDir, config: { auth: { mode: 'off' }, notifications: { tick_ms: 20 } } });
  const receiver = await startReceiver(t);
  await addChannel(app, {
    name: 'ops',
    type: 'webhook',
    config: { url: receiver.url },
    categories: ['system', 'config'],
    min_severity: 'info',
  });
  app.notifications.notify({ category: 'config', severity: 'info', title: 'first', body: 'x' });
  app.notifications.notify({ category: 'config', severity: 'info', title: 'second', body: 'y' });
  await waitFor(() => receiver.received.length >= 3, 500);
  const titles = () => receiver.received.map((request) => JSON.parse(request.body).title as string);
  t.deepEqual(
    titles().filter((title) => title.startsWith('The data dir')),
    ['The data dir is not writable'],
  );
  const error = receiver.received.map((request) => JSON.parse(request.body)).find((body) => body.category === 'system');
  t.like(error, { severity: 'error' });
  await rm(path.join(dataDir, '.notifications'));
  app.notifications.notify({ category: 'config', severity: 'info', title: 'third', body: 'z' });
  await waitFor(() => titles().includes('The data dir is writable again'), 500);
  t.is(titles().filter((title) => title === 'The data dir is not writable').length, 1);
});
