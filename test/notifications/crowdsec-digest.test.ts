/**
 * The CrowdSec digest (API.md §4.21 `security`) against a real LAPI (TESTING.md): decisions added
 * with the real cscli during a period come as one message per notifications.crowdsec_digest_s,
 * summed per scenario and origin; decisions older than the process are not reported.
 */
import anyTest, { type TestFn } from 'ava';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { cscli, crowdsecConfig, useLapi, type Lapi } from '../helpers/crowdsec-lapi.ts';
import { addChannel, captureLog, fakeClock, quietUpstream, startReceiver } from './support.ts';

const test = anyTest as TestFn<{ lapi?: Lapi }>;
const lapiTest = useLapi(test, 'CrowdSec digest tests');

lapiTest('decisions added in a period come as one security message per period, per scenario', async (t) => {
  const lapi = t.context.lapi!;
  await cscli(lapi, 'decisions', 'add', '--ip', '192.0.2.1', '--duration', '1h', '--reason', 'before start');
  const clock = fakeClock('2030-01-01T10:00:00.000Z');
  const { lines, logStream } = captureLog();
  const base = crowdsecConfig(lapi);
  const app = await build(t, {
    now: clock.now,
    logStream,
    config: {
      ...base,
      log: { level: 'debug' },
      notifications: { ...quietUpstream, tick_ms: 20, crowdsec_digest_s: 300 },
    },
  });
  const receiver = await startReceiver(t);
  await addChannel(app, {
    name: 'sec',
    type: 'webhook',
    config: { url: receiver.url },
    categories: ['security'],
    min_severity: 'info',
  });
  const reads = () => lines.filter((line) => line.includes('CrowdSec digest: read')).length;
  await waitFor(() => reads() === 1, 1_000);
  await cscli(lapi, 'decisions', 'add', '--ip', '192.0.2.10', '--duration', '1h', '--reason', 'ssh brute force');
  await cscli(lapi, 'decisions', 'add', '--ip', '192.0.2.11', '--duration', '1h', '--reason', 'ssh brute force');
  await cscli(lapi, 'decisions', 'add', '--range', '198.51.100.0/24', '--duration', '2h', '--reason', 'scanner');
  clock.advance(299_000);
  await cscli(lapi, 'decisions', 'add', '--ip', '192.0.2.12', '--duration', '1h', '--reason', 'scanner');
  clock.advance(1_000);
  await waitFor(() => receiver.received.length === 1, 1_000);
  const message = JSON.parse(receiver.received[0].body);
  t.like(message, { category: 'security', severity: 'info', title: 'CrowdSec: 4 new decisions' });
  t.is(
    message.message,
    'Decisions added in the last 5 min, per scenario:\n- scanner (cscli): 2\n- ssh brute force (cscli): 2',
  );
  t.false(message.message.includes('before start'));
  // a quiet period sends nothing; the next decision comes in the next period's message
  clock.advance(300_000);
  await waitFor(() => reads() === 3, 1_000);
  await cscli(lapi, 'decisions', 'add', '--ip', '192.0.2.13', '--duration', '1h', '--reason', 'late');
  clock.advance(300_000);
  await waitFor(() => receiver.received.length === 2, 1_000);
  t.is(JSON.parse(receiver.received[1].body).title, 'CrowdSec: 1 new decision');
});
