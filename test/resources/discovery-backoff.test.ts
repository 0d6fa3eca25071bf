/** A failing upstream is logged once per state change with a count, and polled less often. */
import test from 'ava';
import pino from 'pino';
import { backoffDelayMs, FailureStreak, MAX_BACKOFF_FACTOR } from '../../plugins/resources/failure-streak.ts';
import { logCapture } from '../auth/support.ts';
import { harness } from './support.ts';

const failureLines = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => typeof l.msg === 'string' && /discovery sync failed|reachable again/.test(l.msg));

test('backoff: one interval after the first failure, then doubling, capped at 12 intervals', (t) => {
  const interval = 5000;
  t.deepEqual(
    [0, 1, 2, 3, 4, 5, 50].map((streak) => backoffDelayMs(interval, streak) / interval),
    [1, 1, 2, 4, 8, 12, 12],
  );
  t.is(MAX_BACKOFF_FACTOR, 12);
});

test('FailureStreak: a warning per new error, repeats counted at debug, the recovery with the count', (t) => {
  const logs = logCapture();
  const streak = new FailureStreak(pino({ level: 'debug' }, logs.stream));
  streak.failed('pangolin', 'connection refused', '2026-01-01T00:00:00.000Z');
  streak.failed('pangolin', 'connection refused', '2026-01-01T00:00:05.000Z');
  streak.failed('pangolin', 'connection refused', '2026-01-01T00:00:15.000Z');
  t.is(streak.streak, 3);
  streak.failed('pangolin', 'HTTP 502', '2026-01-01T00:00:35.000Z');
  t.is(streak.streak, 1, 'a different error starts a new streak');
  streak.succeeded('pangolin');
  streak.succeeded('pangolin');
  t.is(streak.streak, 0);
  const lines = logs.lines().map((l) => [l.level, l.count ?? l.failed_syncs, l.previous_count ?? null]);
  t.deepEqual(lines, [
    [40, 1, null],
    [20, 2, null],
    [20, 3, null],
    [40, 1, 3],
    [30, 1, null],
  ]);
});

test('the app: identical failed syncs give one warning, a new error another, the recovery one info line', async (t) => {
  const logs = logCapture();
  // an hour between polls: only the forced syncs below run
  const { app, fake } = await harness(t, { logStream: logs.stream, config: { log: { level: 'info' } } });
  fake.state.fault = '500';
  for (let i = 0; i < 3; i++) t.false((await app.resources.syncNow()).ok);
  fake.state.fault = '502';
  t.false((await app.resources.syncNow()).ok);
  t.false((await app.resources.syncNow()).ok);
  fake.state.fault = null;
  t.true((await app.resources.syncNow()).ok);
  const lines = failureLines(logs.lines());
  t.is(lines.length, 3, JSON.stringify(lines));
  t.like(lines[0], { level: 40, count: 1, source: 'pangolin' });
  t.regex(String(lines[0].error), /500/);
  t.like(lines[1], { level: 40, count: 1, previous_count: 3 });
  t.regex(String(lines[1].error), /502/);
  t.like(lines[2], { level: 30, failed_syncs: 2, msg: 'upstream reachable again after 2 failed syncs' });
});
