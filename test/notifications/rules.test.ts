/**
 * Channel rules (API.md §4.21) with an injected clock: the per-minute cap folding the excess into one
 * "N more" message, quiet hours that errors break through, hourly and daily digests (kept across a restart).
 */
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
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
  t.deepEqual(
    app.notifications
      .counts()
      .map((row) => `${row.channel} ${row.status} ${row.count}`)
      .sort(),
    ['capped failed 0', 'capped sent 5', 'capped suppressed 7'],
  );
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
