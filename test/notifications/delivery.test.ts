/**
 * Delivery (API.md §4.21) with an injected clock: retries after 1 s, 5 s, 30 s, 2 min, 10 min then
 * `failed`; a hanging channel delays neither another channel nor a request; the history with its
 * filters and paging; secrets never in history or logs.
 */
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { addChannel, captureLog, fakeClock, history, quietUpstream, startReceiver } from './support.ts';

const raise = (app: FastifyInstance, title: string, severity: 'info' | 'warning' | 'error' = 'error') =>
  app.notifications.notify({ category: 'proxy', severity, title, body: `body of ${title}` });

test('a failing receiver is retried after 1 s, 5 s, 30 s, 2 min and 10 min, then the message is failed', async (t) => {
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  // each failed attempt logs one line: the clock moves on only once the attempt has been taken in
  const { lines, logStream } = captureLog();
  const failures = () => lines.filter((line) => line.includes('notification attempt failed')).length;
  const app = await build(t, {
    now: clock.now,
    logStream,
    config: { auth: { mode: 'off' }, log: { level: 'warn' }, notifications: { ...quietUpstream, tick_ms: 20 } },
  });
  const receiver = await startReceiver(t, { status: 503, body: 'down for maintenance' });
  await addChannel(app, { name: 'hook', type: 'webhook', config: { url: receiver.url } });
  raise(app, 'Traefik unreachable');
  await waitFor(() => failures() === 1, 100);
  const [first] = await history(app);
  t.like(first, {
    channel: 'hook',
    status: 'queued',
    category: 'proxy',
    severity: 'error',
    title: 'Traefik unreachable',
  });
  t.like(first, { attempts: 1, last_error: 'HTTP 503: down for maintenance' });

  for (const [n, delay] of [1_000, 5_000, 30_000, 120_000, 600_000].entries()) {
    clock.advance(delay);
    await waitFor(() => failures() === n + 2, 100);
    t.is(receiver.received.length, n + 2);
  }
  const [last] = await waitFor(async () => {
    const entries = await history(app);
    return entries[0]?.status === 'failed' ? entries : null;
  }, 100);
  t.like(last, { status: 'failed', attempts: 6, last_error: 'HTTP 503: down for maintenance' });
  clock.advance(3_600_000);
  raise(app, 'barrier', 'error');
  await waitFor(() => receiver.received.length === 7, 100);
  t.is(JSON.parse(receiver.received[6].body).title, 'barrier');
  t.deepEqual(
    app.notifications.counts().filter((row) => row.count > 0),
    [{ channel: 'hook', status: 'failed', count: 1 }],
  );
});

test('a hanging channel delays neither another channel nor an API request', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' }, notifications: { send_timeout_ms: 60_000 } } });
  const hanging = await startReceiver(t, { hang: true });
  const healthy = await startReceiver(t);
  await addChannel(app, { name: 'stuck', type: 'webhook', config: { url: hanging.url } });
  await addChannel(app, { name: 'fine', type: 'webhook', config: { url: healthy.url } });
  const started = Date.now();
  for (let n = 0; n < 5; n++) raise(app, `event ${n}`);
  await waitFor(() => healthy.received.length === 5, 500);
  const deliveredMs = Date.now() - started;
  // on a busy machine the hanging receiver may see its request after the healthy one saw all five
  await waitFor(() => hanging.received.length >= 1, 100);
  t.is(hanging.received.length, 1, 'one attempt at a time per channel');
  const answered = await app.inject({ url: '/api/notifications/channels' });
  t.is(answered.statusCode, 200);
  const entries = await history(app, '?channel=stuck');
  t.is(entries.length, 5);
  t.true(entries.every((entry) => entry.status === 'queued'));
  t.log(`5 messages through the healthy channel in ${deliveredMs} ms while the other hangs`);
  await hanging.close();
});

test('history: newest first, channel/status/since filters, paging with X-Total-Count and Link', async (t) => {
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  const app = await build(t, { now: clock.now, config: { auth: { mode: 'off' }, notifications: quietUpstream } });
  const receiver = await startReceiver(t);
  await addChannel(app, { name: 'a', type: 'webhook', config: { url: receiver.url } });
  await addChannel(app, { name: 'b', type: 'webhook', config: { url: receiver.url }, categories: ['certs'] });
  for (let n = 0; n < 3; n++) {
    raise(app, `old ${n}`);
    clock.advance(1000);
  }
  clock.advance(3_600_000);
  raise(app, 'new');
  app.notifications.notify({ category: 'certs', severity: 'warning', title: 'cert', body: 'expires' });
  await waitFor(() => receiver.received.length === 6, 200);
  await waitFor(async () => (await history(app, '?status=sent')).length === 6, 200);
  const all = await app.inject({ url: '/api/notifications/history' });
  t.is(all.headers['x-total-count'], '6');
  t.deepEqual(
    all.json().map((e: { title: string; channel: string }) => `${e.channel}:${e.title}`),
    ['b:cert', 'a:cert', 'a:new', 'a:old 2', 'a:old 1', 'a:old 0'],
  );
  t.deepEqual(
    (await history(app, '?channel=b')).map((e) => e.title),
    ['cert'],
  );
  t.deepEqual(
    (await history(app, '?since=30m')).map((e) => e.title),
    ['cert', 'cert', 'new'],
  );
  t.deepEqual(
    (await history(app, '?since=2030-01-01T10:00:01.000Z&channel=a')).map((e) => e.title),
    ['cert', 'new', 'old 2', 'old 1'],
  );
  const paged = await app.inject({ url: '/api/notifications/history?channel=a&page=2&page_size=2' });
  t.deepEqual(
    paged.json().map((e: { title: string }) => e.title),
    ['old 2', 'old 1'],
  );
  t.is(paged.headers['x-total-count'], '5');
  t.is(
    paged.headers.link,
    '</api/notifications/history?channel=a&page=3&page_size=2>; rel="next", </api/notifications/history?channel=a&page=1&page_size=2>; rel="prev"',
  );
  for (const query of ['?status=done', '?since=yesterday', '?page_size=0', '?channel=Bad_Id'])
    t.is((await app.inject({ url: `/api/notifications/history${query}` })).statusCode, 422, query);
  t.is(Object.keys(all.json()[0]).sort().join(','), 'at,attempts,category,channel,id,last_error,severity,status,title');
});

test('secrets of a channel never reach the history or the logs, even when the receiver quotes them', async (t) => {
  const { lines, logStream } = captureLog();
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  const app = await build(t, {
    now: clock.now,
    logStream,
    config: { auth: { mode: 'off' }, log: { level: 'debug' }, notifications: { ...quietUpstream, tick_ms: 20 } },
  });
  const receiver = await startReceiver(t, { status: 401 });
  const secret = 'tg-secret-AAbbCCdd';
  receiver.behaviour.body = `{"ok":false,"description":"bad token bot123:${secret} at /bot123:${secret}/sendMessage"}`;
  await addChannel(app, {
    name: 'tg',
    type: 'telegram',
    config: { bot_token: `123:${secret}`, chat_id: '42', api_url: receiver.url },
  });
  const failures = () => lines.filter((line) => line.includes('notification attempt failed')).length;
  raise(app, 'leak test');
  // the clock moves on only once the failed attempt has been taken in (its retry time is set then)
  await waitFor(() => failures() === 1, 100);
  clock.advance(1000);
  await waitFor(() => failures() === 2, 100);
  const entries = await history(app);
  t.like(entries[0], { attempts: 2, status: 'queued' });
  t.regex(String(entries[0].last_error), /^HTTP 401/);
  t.is(receiver.received.length, 2);
  t.false(JSON.stringify(entries).includes(secret));
  t.false(lines.join('').includes(secret));
});
