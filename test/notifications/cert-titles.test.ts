/**
 * Certificate titles (API.md §4.21 `certs`): the metrics group's `days_left` 0 means "less than a
 * day left" (plugins/metrics/cert-check.ts rounds down), so "has expired" is said only when
 * `not_after` is in the past by the app's clock.
 */
import test from 'ava';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { addChannel, fakeClock, quietUpstream, startReceiver } from './support.ts';

test('days_left 0 with not_after ahead → "expires within a day"; not_after passed → "has expired"', async (t) => {
  const clock = fakeClock('2030-01-03T00:00:00.000Z');
  const app = await build(t, {
    now: clock.now,
    config: { auth: { mode: 'off' }, notifications: { ...quietUpstream, tick_ms: 20 } },
  });
  const receiver = await startReceiver(t);
  await addChannel(app, { name: 'certs', type: 'webhook', config: { url: receiver.url }, categories: ['certs'] });
  const publish = (data: object) => app.events.publish('certificate', { source: 'metrics', ...data });
  publish({ cn: 'soon.example.test', not_after: '2030-01-03T10:00:00.000Z', days_left: 0, threshold: 0 });
  publish({ cn: 'gone.example.test', not_after: '2030-01-02T23:00:00.000Z', days_left: -1, threshold: 0 });
  publish({ cn: 'later.example.test', not_after: '2030-01-05T01:00:00.000Z', days_left: 2, threshold: 3 });
  await waitFor(() => receiver.received.length === 3, 200);
  t.deepEqual(
    receiver.received.map((request) => (JSON.parse(request.body) as { title: string }).title),
    [
      'Certificate soon.example.test expires within a day',
      'Certificate gone.example.test has expired',
      'Certificate later.example.test expires in 2 days',
    ],
  );
});
