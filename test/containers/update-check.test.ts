/** The background image update check's schedule (plugins/container/update-check.ts), with a real timer. */
import test from 'ava';
import { UpdateCheck } from '../../plugins/container/update-check.ts';
import { waitFor } from '../helpers/wait.ts';

function logger() {
  const warnings: string[] = [];
  const ignore = () => undefined;
  return { warnings, log: { warn: (_o: object, msg: string) => void warnings.push(msg), info: ignore, debug: ignore } };
}

test('checks every interval on the leader only, never two at once, and stops on close', async (t) => {
  let leader = false;
  let calls = 0;
  let inFlight = 0;
  let most = 0;
  let release: (() => void) | null = null;
  const { log } = logger();
  const check = new UpdateCheck({
    intervalMs: 20,
    leads: () => leader,
    check: async () => {
      calls += 1;
      inFlight += 1;
      most = Math.max(most, inFlight);
      // the first check hangs for several intervals: the ticks meanwhile must not start another
      if (calls === 1) await new Promise<void>((resolve) => (release = resolve));
      inFlight -= 1;
      return [{ update_available: true }];
    },
    log,
  });
  check.start();
  // a follower does not check
  await check.tick();
  t.is(calls, 0);
  leader = true;
  await waitFor(() => release !== null, 100);
  const first = check.tick();
  t.is(calls, 1, 'a tick during a check joins it');
  release!();
  await first;
  await waitFor(() => calls >= 3, 100);
  t.is(most, 1);
  await check.close();
  const after = calls;
  await check.tick();
  t.is(calls, after, 'no check after close');
});

test('a failing check is logged once per new error, never thrown, and the next one runs', async (t) => {
  let calls = 0;
  const { warnings, log } = logger();
  const check = new UpdateCheck({
    intervalMs: 20,
    leads: () => true,
    check: async () => {
      calls += 1;
      if (calls <= 3) throw new Error('connect ENOENT /no/docker.sock');
      return [];
    },
    log,
  });
  check.start();
  t.teardown(() => check.close());
  await waitFor(() => calls >= 5, 100);
  t.deepEqual(warnings, ['image update check failed; tried again next interval']);
});

test('interval 0 starts no timer', async (t) => {
  let calls = 0;
  const check = new UpdateCheck({
    intervalMs: 0,
    leads: () => true,
    check: async () => {
      calls += 1;
      return [];
    },
    log: logger().log,
  });
  check.start();
  t.teardown(() => check.close());
  // a started timer would have fired within this many of its own interval: compare with a 20 ms one
  let ticks = 0;
  const witness = new UpdateCheck({
    intervalMs: 20,
    leads: () => true,
    check: async () => {
      ticks += 1;
      return [];
    },
    log: logger().log,
  });
  witness.start();
  t.teardown(() => witness.close());
  await waitFor(() => ticks >= 3, 100);
  t.is(calls, 0);
});
