import test from 'ava';
import { selectExpired } from '../../plugins/backup/retention.ts';
import { parseInterval, startSchedule, type ScheduleClock } from '../../plugins/backup/schedule.ts';
import { waitFor } from '../helpers/wait.ts';
import { backupFiles, buildBackupApp, call } from './support.ts';

const day = (n: number) => new Date(Date.UTC(2025, 0, n));

test('retention after each create and on cleanup deletes backups outside keep_last that are older than max_age_days', async (t) => {
  let now = day(1);
  const { app, backupDir } = await buildBackupApp(t, {
    now: () => now,
    backup: { retention: { keep_last: 2, max_age_days: 3 } },
  });
  const ids: string[] = [];
  for (let n = 1; n <= 5; n++) {
    now = day(n);
    ids.push((await call(app, { method: 'POST', url: '/api/backup/create' })).body.id);
  }
  // at day 5 the cutoff is day 2: day 1 goes; day 2 is exactly max_age_days old and stays
  t.deepEqual(
    await backupFiles(backupDir),
    ids.slice(1).map((id) => `${id}.tar.gz`),
  );

  now = day(10);
  const cleanup = await call(app, { method: 'POST', url: '/api/backup/cleanup' });
  t.is(cleanup.status, 200);
  t.deepEqual(cleanup.body, { deleted: [ids[2], ids[1]], kept: 2 });
  t.deepEqual(
    (await call(app, { method: 'GET', url: '/api/backup/list' })).body.map((b: { id: string }) => b.id),
    [ids[4], ids[3]],
    'the newest keep_last stay whatever their age',
  );
  t.deepEqual((await call(app, { method: 'POST', url: '/api/backup/cleanup' })).body, { deleted: [], kept: 2 });
});

test('max_age_days 0 turns age deletion off: cleanup keeps everything; keep_last 0 leaves only the age rule', async (t) => {
  let now = day(1);
  const off = await buildBackupApp(t, { now: () => now, backup: { retention: { keep_last: 1, max_age_days: 0 } } });
  for (let n = 1; n <= 3; n++) {
    now = day(n);
    await call(off.app, { method: 'POST', url: '/api/backup/create' });
  }
  now = day(300);
  t.deepEqual((await call(off.app, { method: 'POST', url: '/api/backup/cleanup' })).body, { deleted: [], kept: 3 });

  const ageOnly = await buildBackupApp(t, { now: () => now, backup: { retention: { keep_last: 0, max_age_days: 1 } } });
  now = day(1);
  const old = (await call(ageOnly.app, { method: 'POST', url: '/api/backup/create' })).body.id;
  now = day(5);
  const fresh = (await call(ageOnly.app, { method: 'POST', url: '/api/backup/create' })).body.id;
  t.deepEqual(await backupFiles(ageOnly.backupDir), [`${fresh}.tar.gz`], `${old} went with the create at day 5`);
});

test('selectExpired: both conditions, strict age, unparsable dates never old', (t) => {
  const backups = [
    { id: 'e', created_at: day(5).toISOString() },
    { id: 'd', created_at: day(4).toISOString() },
    { id: 'c', created_at: 'not a date' },
    { id: 'b', created_at: day(2).toISOString() },
    { id: 'a', created_at: day(1).toISOString() },
  ];
  t.deepEqual(selectExpired(backups, { keep_last: 2, max_age_days: 3 }, day(5)), ['a']);
  t.deepEqual(
    selectExpired(backups, { keep_last: 0, max_age_days: 1 }, day(5)),
    ['b', 'a'],
    'd is exactly one day old: not older',
  );
  t.deepEqual(selectExpired(backups, { keep_last: 0, max_age_days: 0 }, day(50)), []);
  t.deepEqual(selectExpired(backups, { keep_last: 10, max_age_days: 1 }, day(50)), []);
});

test('parseInterval accepts <n>s|m|h|d; empty, zero and anything else mean no schedule', (t) => {
  t.is(parseInterval('24h'), 86_400_000);
  t.is(parseInterval('90s'), 90_000);
  t.is(parseInterval('15m'), 900_000);
  t.is(parseInterval('30d'), 2_592_000_000);
  for (const off of ['', '0h', '0s', 'h', '24', '1w', '-1h', '1.5h']) t.is(parseInterval(off), null, off);
});

/** A clock whose timers fire only when the test advances it. */
function fakeClock() {
  let now = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let next = 1;
  const clock: ScheduleClock & { advance(ms: number): Promise<void>; pending(): number } = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = next++;
      timers.set(id, { at: now + ms, fn });
      return {
        unref() {
          return this;
        },
        id,
      } as unknown as NodeJS.Timeout;
    },
    clearTimeout: (timer) => {
      timers.delete((timer as unknown as { id: number }).id);
    },
    async advance(ms: number) {
      const target = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
        await new Promise((resolve) => setImmediate(resolve)); // let the run and its re-arm settle
      }
      now = target;
    },
    pending: () => timers.size,
  };
  return clock;
}

test('startSchedule runs once per interval, steps through waits longer than a Node timer holds, and stops', async (t) => {
  const clock = fakeClock();
  let runs = 0;
  const stop = startSchedule(
    30 * 86_400_000,
    async () => {
      runs++;
    },
    clock,
  );
  await clock.advance(29 * 86_400_000);
  t.is(runs, 0, 'a 30-day wait is longer than 2^31-1 ms: taken in steps, not fired early');
  await clock.advance(86_400_000);
  t.is(runs, 1);
  await clock.advance(30 * 86_400_000);
  t.is(runs, 2);
  stop();
  t.is(clock.pending(), 0);
  await clock.advance(90 * 86_400_000);
  t.is(runs, 2);
});

test('backup.schedule makes scheduled backups (kind scheduled, retention applied) and closing the app stops the timer', async (t) => {
  const clock = fakeClock();
  let now = day(1);
  const { app, backupDir } = await buildBackupApp(t, {
    now: () => now,
    backup: { schedule: '24h', retention: { keep_last: 1, max_age_days: 1 } },
    backupOptions: { scheduleClock: clock },
  });
  t.is(clock.pending(), 1);
  const listed = async () =>
    (await call(app, { method: 'GET', url: '/api/backup/list' })).body as { id: string; kind: string }[];
  await clock.advance(86_400_000);
  const [first] = await waitFor(async () => {
    const list = await listed();
    return list.length === 1 ? list : null;
  }, 10_000);
  t.like(first, { kind: 'scheduled', id: 'backup-20250101T000000Z-scheduled' });

  await waitFor(() => clock.pending() === 1, 10_000); // re-armed once the run has finished
  now = day(4);
  await clock.advance(86_400_000);
  // the day-1 backup is past retention once the day-4 one exists
  await waitFor(async () => (await listed()).map((b) => b.id).join() === 'backup-20250104T000000Z-scheduled', 10_000);
  await waitFor(() => clock.pending() === 1, 10_000);
  t.deepEqual(await backupFiles(backupDir), ['backup-20250104T000000Z-scheduled.tar.gz']);
  await app.close();
  t.is(clock.pending(), 0, 'onClose cleared the timer');
});
