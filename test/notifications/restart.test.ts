/**
 * Queued messages survive a restart (API.md §4.21): each is delivered once, or reported failed when
 * the process stopped during its attempt — never dropped silently.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { addChannel, captureLog, fakeClock, history, quietUpstream, startReceiver } from './support.ts';

const config = { auth: { mode: 'off' }, notifications: { ...quietUpstream, tick_ms: 20 } };

test('a message waiting for its retry is sent once by the next process', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  const receiver = await startReceiver(t, { status: 502 });
  const { lines, logStream } = captureLog();
  const first = await build(t, { dataDir, now: clock.now, logStream, config: { ...config, log: { level: 'warn' } } });
  await addChannel(first, { name: 'hook', type: 'webhook', config: { url: receiver.url } });
  first.notifications.notify({ category: 'containers', severity: 'error', title: 'traefik exited', body: 'exit 1' });
  await waitFor(() => lines.some((line) => line.includes('notification attempt failed')), 100);
  await first.close();
  t.is(receiver.received.length, 1);

  receiver.behaviour.status = 200;
  clock.advance(1_000);
  const second = await build(t, { dataDir, now: clock.now, config });
  const [entry] = await waitFor(async () => {
    const entries = await history(second);
    return entries[0]?.status === 'sent' ? entries : null;
  }, 1_000);
  t.like(entry, { title: 'traefik exited', status: 'sent', attempts: 2, last_error: null });
  t.is(receiver.received.length, 2);
  t.is(JSON.parse(receiver.received[1].body).message, 'exit 1');
});

test('a message whose attempt was cut by a crash is reported failed, not sent again', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const receiver = await startReceiver(t);
  await mkdir(path.join(dataDir, 'notifications'), { recursive: true });
  await writeFile(
    path.join(dataDir, 'notifications', 'hook.yaml'),
    `name: hook\ntype: webhook\nconfig:\n  url: ${receiver.url}\n`,
  );
  await mkdir(path.join(dataDir, '.notifications'), { recursive: true });
  const record = (id: string, inFlight: boolean) => ({
    id,
    channel: 'hook',
    category: 'proxy',
    severity: 'error',
    title: id,
    body: 'text',
    at: '2030-01-01T09:00:00.000Z',
    status: 'queued',
    attempts: inFlight ? 1 : 0,
    last_error: null,
    due_at: null,
    hold: null,
    in_flight: inFlight,
  });
  await writeFile(
    path.join(dataDir, '.notifications', 'state.json'),
    JSON.stringify({ version: 1, records: [record('cut', true), record('waiting', false)] }),
  );
  const app = await build(t, { dataDir, config });
  await waitFor(() => receiver.received.length === 1, 500);
  const entries = await waitFor(async () => {
    const found = await history(app);
    return found.find((e) => e.id === 'waiting')?.status === 'sent' ? found : null;
  }, 500);
  t.like(
    entries.find((e) => e.id === 'cut'),
    { status: 'failed', attempts: 1, last_error: 'interrupted by a restart during the attempt; it may have arrived' },
  );
  t.is(JSON.parse(receiver.received[0].body).title, 'waiting');
});

test('shutdown during an attempt to a hanging receiver: the close is bounded and the message reported failed', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const hanging = await startReceiver(t, { hang: true });
  const settings = { ...config, notifications: { ...config.notifications, send_timeout_ms: 60_000 } };
  const first = await build(t, { dataDir, config: settings });
  await addChannel(first, { name: 'hook', type: 'webhook', config: { url: hanging.url } });
  first.notifications.notify({ category: 'proxy', severity: 'error', title: 'stuck', body: 'x' });
  await waitFor(() => hanging.received.length === 1, 100);
  const started = Date.now();
  await first.close();
  const closeMs = Date.now() - started;
  t.true(closeMs < 30_000, `close took ${closeMs} ms`);
  t.log(`close with one attempt hanging: ${closeMs} ms`);
  const second = await build(t, { dataDir, config: settings });
  const [entry] = await history(second);
  t.like(entry, { title: 'stuck', status: 'failed', attempts: 1 });
  t.regex(String(entry.last_error), /interrupted by shutdown; it may have arrived/);
  t.is(hanging.received.length, 1);
});
