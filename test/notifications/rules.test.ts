/**
 * Channel rules (API.md §4.21) with an injected clock: the per-minute cap folding the excess into one
 * "N more" message, quiet hours that errors break through, hourly and daily digests (kept across a restart).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { periodEnd } from '../../plugins/notifications/rules.ts';
import { addChannel, fakeClock, history, quietUpstream, startReceiver, type Receiver } from './support.ts';

const config = { auth: { mode: 'off' }, notifications: { ...quietUpstream, tick_ms: 20 } };
const titles = (receiver: Receiver) => receiver.received.map((request) => JSON.parse(request.body).title as string);
const raise = (app: FastifyInstance, title: string, severity: 'info' | 'warning' | 'error' = 'warning') =>
  app.notifications.notify({ category: 'containers', severity, title, body: `about ${title}` });

test('past max_per_minute the excess is suppressed and folded into one "N more" message a minute later', async (t) => {
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  const app = await build(t, { now: clock.now, config });
  const receiver = await startReceiver(t);
  await addChannel(app, { name: 'capped', type: 'webhook', config: { url: receiver.url }, max_per_minute: 3 });
  for (let n = 0; n < 10; n++) raise(app, `event ${n}`);
  await waitFor(() => receiver.received.length === 3, 200);
  const entries = await waitFor(async () => {
    const found = await history(app, '?status=suppressed');
    return found.length === 7 ? found : null;
  }, 200);
  t.deepEqual(
    entries.map((e) => e.title),
    ['event 9', 'event 8', 'event 7', 'event 6', 'event 5', 'event 4', 'event 3'],
  );
  t.deepEqual(titles(receiver), ['event 0', 'event 1', 'event 2']);
  clock.advance(60_000);
  await waitFor(() => receiver.received.length === 4, 200);
  const folded = JSON.parse(receiver.received[3].body);
  t.is(folded.title, '7 more notifications');
  t.regex(folded.message, /- \[warning\] event 3 \(containers, 2030-01-01T10:00:00.000Z\)/);
  t.regex(folded.message, /event 9/);
  // the minute has passed: messages flow again
  raise(app, 'after');
  await waitFor(() => receiver.received.length === 5, 200);
  // the receiver records a request before its answer reaches the sender: counts follow the answer
  const counts = () =>
    app.notifications
      .counts()
      .map((row) => `${row.channel} ${row.status} ${row.count}`)
      .sort();
  await waitFor(() => counts().includes('capped sent 5'), 200);
  t.deepEqual(counts(), ['capped failed 0', 'capped sent 5', 'capped suppressed 7']);
});

test('quiet hours hold messages below error until they end; errors go out at once', async (t) => {
  const clock = fakeClock('2030-01-01T23:00:00.000Z');
  const app = await build(t, { now: clock.now, config });
  const quiet = await startReceiver(t);
  const loud = await startReceiver(t);
  await addChannel(app, {
    name: 'night',
    type: 'webhook',
    config: { url: quiet.url },
    min_severity: 'info',
    quiet_hours: { start: '22:00', end: '07:00', timezone: 'UTC' },
  });
  await addChannel(app, { name: 'day', type: 'webhook', config: { url: loud.url }, min_severity: 'info' });
  raise(app, 'image update available', 'info');
  raise(app, 'traefik exited', 'error');
  await waitFor(() => loud.received.length === 2 && quiet.received.length === 1, 200);
  t.deepEqual(titles(quiet), ['traefik exited']);
  const held = (await history(app, '?channel=night&status=queued')).map((e) => e.title);
  t.deepEqual(held, ['image update available']);
  clock.set('2030-01-02T06:59:59.000Z');
  raise(app, 'barrier', 'error');
  await waitFor(() => quiet.received.length === 2, 200);
  t.deepEqual(titles(quiet), ['traefik exited', 'barrier']);
  clock.set('2030-01-02T07:00:00.000Z');
  await waitFor(() => quiet.received.length === 3, 200);
  t.is(titles(quiet)[2], 'image update available');
});

test('an hourly digest sends one message per period listing what came in', async (t) => {
  const clock = fakeClock('2030-01-01T10:15:00.000Z');
  const app = await build(t, { now: clock.now, config });
  const receiver = await startReceiver(t);
  await addChannel(app, { name: 'digest', type: 'webhook', config: { url: receiver.url }, schedule: 'hourly' });
  raise(app, 'one');
  clock.advance(60_000);
  raise(app, 'two', 'error');
  raise(app, 'three');
  t.deepEqual(
    (await history(app)).map((e) => `${e.title} ${e.status}`),
    ['three queued', 'two queued', 'one queued'],
  );
  clock.set('2030-01-01T11:00:00.000Z');
  await waitFor(() => receiver.received.length === 1, 200);
  const digest = JSON.parse(receiver.received[0].body);
  t.is(digest.title, 'Digest: 3 notifications (hourly)');
  t.is(digest.severity, 'error');
  t.deepEqual(
    digest.message.split('\n').map((line: string) => line.replace(/ \(.*$/, '')),
    ['- [warning] one', '- [error] two', '- [warning] three'],
  );
  const entries = await waitFor(async () => {
    const found = await history(app, '?status=sent');
    return found.length === 4 ? found : null;
  }, 200);
  t.deepEqual(
    entries.map((e) => e.title),
    ['Digest: 3 notifications (hourly)', 'three', 'two', 'one'],
  );
});

test('a daily digest waiting across a restart is sent by the next process at midnight', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const clock = fakeClock('2030-01-01T18:00:00.000Z');
  const receiver = await startReceiver(t);
  const first = await build(t, { dataDir, now: clock.now, config });
  await addChannel(first, { name: 'daily', type: 'webhook', config: { url: receiver.url }, schedule: 'daily' });
  raise(first, 'kept');
  await first.close();
  const second = await build(t, { dataDir, now: clock.now, config });
  t.deepEqual(
    (await history(second)).map((e) => `${e.title} ${e.status}`),
    ['kept queued'],
  );
  clock.set('2030-01-02T00:00:00.000Z');
  await waitFor(() => receiver.received.length === 1, 200);
  t.is(JSON.parse(receiver.received[0].body).title, 'Digest: 1 notifications (daily)');
});

test('a daily digest ends at midnight of the channel quiet_hours.timezone (UTC without one)', async (t) => {
  const clock = fakeClock('2030-01-01T20:00:00.000Z');
  const app = await build(t, { now: clock.now, config });
  const berlin = await startReceiver(t);
  const utc = await startReceiver(t);
  // start = end: no quiet hours, only the zone
  const zone = { start: '00:00', end: '00:00', timezone: 'Europe/Berlin' };
  await addChannel(app, {
    name: 'berlin',
    type: 'webhook',
    config: { url: berlin.url },
    schedule: 'daily',
    quiet_hours: zone,
  });
  await addChannel(app, { name: 'utc', type: 'webhook', config: { url: utc.url }, schedule: 'daily' });
  raise(app, 'evening');
  // 23:00 UTC is midnight in Berlin (UTC+1 in January): the Berlin day is over, the UTC day is not
  clock.set('2030-01-01T23:00:00.000Z');
  await waitFor(() => berlin.received.length === 1, 200);
  t.is(JSON.parse(berlin.received[0].body).title, 'Digest: 1 notifications (daily)');
  t.is(utc.received.length, 0, 'the tick that sent Berlin its digest found the UTC one not due');
  clock.set('2030-01-02T00:00:00.000Z');
  await waitFor(() => utc.received.length === 1, 200);
  t.is(berlin.received.length, 1);
});

test('digest periods follow the zone: 23- and 25-hour days, a skipped midnight, half-hour offsets', (t) => {
  const end = (schedule: 'hourly' | 'daily', at: string, zone?: string) =>
    new Date(periodEnd(schedule, Date.parse(at), zone)).toISOString();
  t.is(end('daily', '2030-01-01T18:00:00Z'), '2030-01-02T00:00:00.000Z');
  t.is(end('daily', '2030-01-01T23:30:00Z', 'Europe/Berlin'), '2030-01-02T23:00:00.000Z');
  // spring forward on 2030-03-31 (23 h) and fall back on 2030-10-27 (25 h) in Berlin
  t.is(end('daily', '2030-03-31T12:00:00Z', 'Europe/Berlin'), '2030-03-31T22:00:00.000Z');
  t.is(end('daily', '2030-10-27T12:00:00Z', 'Europe/Berlin'), '2030-10-27T23:00:00.000Z');
  // Santiago skipped 2025-09-07 00:00 (clocks went to 01:00, UTC-3): the day ends at that jump
  t.is(end('daily', '2025-09-06T12:00:00Z', 'America/Santiago'), '2025-09-07T04:00:00.000Z');
  // hourly follows the local full hour: Kolkata is UTC+5:30
  t.is(end('hourly', '2030-01-01T10:15:00Z', 'Asia/Kolkata'), '2030-01-01T10:30:00.000Z');
  t.is(end('hourly', '2030-01-01T10:15:00Z'), '2030-01-01T11:00:00.000Z');
});

test('a pending "N more" message survives a restart within its minute and is sent when the minute is over', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  const receiver = await startReceiver(t);
  const first = await build(t, { dataDir, now: clock.now, config });
  await addChannel(first, { name: 'capped', type: 'webhook', config: { url: receiver.url }, max_per_minute: 2 });
  for (let n = 0; n < 5; n++) raise(first, `event ${n}`);
  await waitFor(() => receiver.received.length === 2, 200);
  await waitFor(async () => (await history(first, '?status=suppressed')).length === 3, 200);
  clock.advance(30_000);
  await first.close();
  const saved = JSON.parse(await readFile(path.join(dataDir, '.notifications', 'state.json'), 'utf8')) as {
    folds: { ids: string[]; first: number }[];
  };
  t.is(saved.folds.length, 1);
  t.is(saved.folds[0].ids.length, 3);
  t.is(saved.folds[0].first, Date.parse('2030-01-01T10:00:00.000Z'));

  const second = await build(t, { dataDir, now: clock.now, config });
  clock.advance(30_000);
  await waitFor(() => receiver.received.length === 3, 200);
  const folded = JSON.parse(receiver.received[2].body);
  t.is(folded.title, '3 more notifications');
  t.regex(folded.message, /event 2[\s\S]*event 3[\s\S]*event 4/);
  const entries = await waitFor(async () => {
    const found = await history(second, '?status=sent');
    return found.some((e) => e.title === '3 more notifications') ? found : null;
  }, 200);
  t.deepEqual(
    entries.map((e) => e.title),
    ['3 more notifications', 'event 1', 'event 0'],
  );
});
