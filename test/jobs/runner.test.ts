/** The job runner (API.md §4.14, §2.10): ids, steps and progress, one-at-a-time kinds, retention, shutdown. */
import test from 'ava';
import pino from 'pino';
import { JobRunner, type JobWork } from '../../plugins/jobs/runner.ts';
import { waitFor } from '../helpers/wait.ts';

const silent = pino({ level: 'silent' });
const runnerAt = (clock: { now: number }, extra: Partial<ConstructorParameters<typeof JobRunner>[0]> = {}) =>
  new JobRunner({ now: () => new Date(clock.now), log: silent, ...extra });
const noop: JobWork = async () => {};

test('ids are job-<lower-case ULID> and sort in creation order within one millisecond', async (t) => {
  const runner = runnerAt({ now: Date.parse('2026-01-01T00:00:00.000Z') });
  const ids = Array.from({ length: 50 }, () => runner.start({ kind: 'demo', params: {}, steps: [] }, noop).id);
  for (const id of ids) t.regex(id, /^job-[0-9a-hjkmnp-tv-z]{26}$/);
  t.deepEqual([...ids].sort(), ids);
  t.deepEqual(
    runner.list().map((j) => j.id),
    [...ids].reverse(),
    'newest first',
  );
});

test('steps report status, messages and timestamps; progress counts finished steps; success ends at 1', async (t) => {
  const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
  const runner = runnerAt(clock);
  const seen: number[] = [];
  runner.onChange((job) => seen.push(job.progress));
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const job = runner.start(
    {
      kind: 'demo',
      params: { a: 1 },
      steps: [
        { service: 'x', step: 'one' },
        { service: 'x', step: 'two' },
      ],
    },
    async (ctx) => {
      const one = ctx.step('x', 'one');
      one.begin('working');
      clock.now += 1000;
      one.ok('done one');
      await gate;
      ctx.step('x', 'two').skip('not needed');
    },
  );
  t.like(job, {
    status: 'queued',
    progress: 0,
    params: { a: 1 },
    error: null,
    started_at: null,
    created_at: '2026-01-01T00:00:00.000Z',
  });
  const midway = await waitFor(() => {
    const j = runner.get(job.id);
    return j.steps[0].status === 'ok' ? j : null;
  }, 5000);
  t.like(midway, { status: 'running', progress: 0.5 });
  t.deepEqual(midway.steps[0], {
    service: 'x',
    step: 'one',
    status: 'ok',
    message: 'done one',
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:00:01.000Z',
  });
  release();
  const done = await runner.settled(job.id);
  t.like(done, { status: 'succeeded', progress: 1, error: null, finished_at: '2026-01-01T00:00:01.000Z' });
  t.like(done.steps[1], { status: 'skipped', message: 'not needed' });
  t.deepEqual(seen.slice(-1), [1]);
  t.true(seen.includes(0.5));
});

test('a failing job: error kept, the running step failed, pending steps skipped, added steps placed after their service', async (t) => {
  const runner = runnerAt({ now: Date.now() });
  const job = runner.start(
    {
      kind: 'demo',
      params: {},
      steps: [
        { service: 'a', step: 'pull' },
        { service: 'a', step: 'health' },
        { service: 'b', step: 'pull' },
      ],
    },
    async (ctx) => {
      ctx.step('a', 'pull').begin('pulling');
      ctx.addStep('a', 'rollback').ok('rolled back');
      throw new Error('update of a failed at pull: registry down');
    },
  );
  const done = await runner.settled(job.id);
  t.like(done, { status: 'failed', progress: 1, error: 'update of a failed at pull: registry down' });
  t.deepEqual(
    done.steps.map((s) => `${s.service}:${s.step}:${s.status}`),
    ['a:pull:failed', 'a:health:skipped', 'a:rollback:ok', 'b:pull:skipped'],
  );
  t.is(done.steps[1].message, 'skipped: the job failed');
});

test('exclusive kinds run one job at a time (409 busy naming the job); other kinds and later jobs are free', async (t) => {
  const runner = runnerAt({ now: Date.now() });
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = runner.start({ kind: 'update', params: {}, steps: [], exclusive: true }, () => gate);
  const error = t.throws(() =>
    runner.start({ kind: 'update', params: {}, steps: [], exclusive: true }, noop),
  ) as Error & { statusCode: number; id: string };
  t.is(error.statusCode, 409);
  t.is(error.id, 'busy');
  t.true(error.message.includes(first.id));
  t.notThrows(() => runner.start({ kind: 'other', params: {}, steps: [], exclusive: true }, noop));
  release();
  await runner.settled(first.id);
  t.notThrows(() => runner.start({ kind: 'update', params: {}, steps: [], exclusive: true }, noop));
});

test('retention keeps the last 100 jobs and only those finished within 24 h; running jobs always stay', async (t) => {
  const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
  const runner = runnerAt(clock);
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const longRunning = runner.start({ kind: 'slow', params: {}, steps: [] }, () => gate);
  const ids: string[] = [];
  for (let i = 0; i < 105; i++) {
    const id = runner.start({ kind: 'demo', params: { i }, steps: [] }, noop).id;
    await runner.settled(id);
    ids.push(id);
  }
  const kept = runner.list();
  t.is(kept.length, 101, 'the newest 100, plus the older job still running');
  t.deepEqual(
    kept.filter((j) => j.kind === 'demo').map((j) => j.id),
    ids.slice(-100).reverse(),
    'newest first, the 5 oldest finished dropped',
  );
  t.truthy(
    kept.find((j) => j.id === longRunning.id),
    'the running job is kept',
  );

  clock.now += 24 * 3_600_000 + 1;
  t.deepEqual(
    runner.list().map((j) => j.id),
    [longRunning.id],
    'finished more than 24 h ago: gone; running: kept',
  );
  t.throws(() => runner.get(ids[104]), { message: /does not exist/ });
  release();
  await runner.settled(longRunning.id);
});

test('shutdown: a running job is told to stop and waited for; one that ignores it is marked failed after the grace', async (t) => {
  const runner = runnerAt({ now: Date.now() });
  const polite = runner.start({ kind: 'a', params: {}, steps: [{ service: 's', step: 'health' }] }, async (ctx) => {
    ctx.step('s', 'health').begin('waiting');
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    throw new Error(`interrupted: ${(ctx.signal.reason as Error).message}; rolled back`);
  });
  const stubborn = runner.start({ kind: 'b', params: {}, steps: [] }, () => new Promise(() => {}));
  await waitFor(() => runner.get(polite.id).status === 'running' && runner.get(stubborn.id).status === 'running', 5000);
  await runner.close(300);
  t.like(runner.get(polite.id), { status: 'failed', error: 'interrupted: the server is shutting down; rolled back' });
  t.like(runner.get(stubborn.id), { status: 'failed' });
  t.regex(
    runner.get(stubborn.id).error!,
    /^the server shut down while the job was running \(not finished within 300 ms\)/,
  );
});
