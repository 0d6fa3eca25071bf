/**
 * API.md §4.21 `system` sources that no bus event carries: the data dir lock lost (error), through
 * the real lock of core/data-dir-lock.ts, and a cluster leader change (warning) between two members
 * on a real etcd. Each reaches a real webhook receiver on 127.0.0.1.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import anyTest, { type TestFn } from 'ava';
import pino from 'pino';
import { joinCluster, type Cluster } from '../../core/cluster/index.ts';
import { DataDirLockSignal, LOCK_NAME, lockDataDir } from '../../core/data-dir-lock.ts';
import { build, tempDir, testConfig } from '../helpers/build.ts';
import { etcdSkipReason, startEtcdCluster, type EtcdCluster } from '../helpers/etcd.ts';
import { waitFor } from '../helpers/wait.ts';
import { addChannel, quietUpstream, startReceiver, type Receiver } from './support.ts';

const test = anyTest as TestFn<{ etcd?: EtcdCluster }>;
const etcdSkip = etcdSkipReason();
if (etcdSkip) console.warn(`SKIP notifications leader-change test: ${etcdSkip}`);
const etcdTest = etcdSkip ? test.serial.skip : test.serial;

test.before(async (t) => {
  if (!etcdSkip) t.context.etcd = await startEtcdCluster(1);
});
test.after.always(async (t) => {
  await t.context.etcd?.destroy();
});

const bodies = (receiver: Receiver) =>
  receiver.received.map((request) => JSON.parse(request.body) as Record<string, string>);

const systemChannel = (url: string) => ({
  name: 'ops',
  type: 'webhook',
  config: { url },
  categories: ['system'],
  min_severity: 'info',
});

test.serial('the data dir lock removed under a running server raises system/error once', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const signal = new DataDirLockSignal();
  const app = await build(t, {
    dataDir,
    dataDirLock: signal,
    config: { auth: { mode: 'off' }, notifications: { tick_ms: 20, ...quietUpstream } },
  });
  // the real lock (proper-lockfile, refreshed every 10 s), taken as server.ts does, after the store made the dir
  const lock = await lockDataDir(dataDir, { onLost: (err) => signal.lost(err) });
  t.teardown(() => lock.release());
  const receiver = await startReceiver(t);
  await addChannel(app, systemChannel(receiver.url));

  await rm(path.join(dataDir, LOCK_NAME), { recursive: true, force: true });
  // noticed at the lock's next refresh (≤ 10 s), then delivered
  await waitFor(() => receiver.received.length >= 1, 40_000, 100);
  const [body] = bodies(receiver);
  t.like(body, { category: 'system', severity: 'error', title: 'The data dir lock was lost' });
  t.regex(body.message, /another Stack Manager may start writing the same data dir/);
  t.is(receiver.received.length, 1);
});

etcdTest('a cluster leader change raises system/warning on the node that takes over, not on the old one', async (t) => {
  const settings = (node: string) =>
    testConfig('/nonexistent', {
      cluster: {
        etcd_endpoints: t.context.etcd!.endpoints,
        prefix: `/sm-notify-${process.pid}/`,
        node_name: node,
        lease_ttl_s: 5,
      },
    }).cluster;
  const members: Cluster[] = [];
  t.teardown(async () => {
    await Promise.all(members.map((member) => member.close()));
  });
  // node-a first, so that it leads when both apps are built
  const a = joinCluster(settings('node-a'), pino({ level: 'silent' }));
  members.push(a);
  await waitFor(() => a.isLeader(), 10_000);
  const b = joinCluster(settings('node-b'), pino({ level: 'silent' }));
  members.push(b);
  const config = { auth: { mode: 'off' }, notifications: { tick_ms: 20, ...quietUpstream } };
  const appA = await build(t, { cluster: a, config });
  const appB = await build(t, { cluster: b, config });
  const [receiverA, receiverB] = [await startReceiver(t), await startReceiver(t)];
  await addChannel(appA, systemChannel(receiverA.url));
  await addChannel(appB, systemChannel(receiverB.url));
  t.true(a.isLeader());
  t.false(b.isLeader());

  // node-a resigns (as at its shutdown): node-b is elected and tells
  members.splice(members.indexOf(a), 1);
  await a.close();
  await waitFor(() => b.isLeader(), 15_000);
  await waitFor(() => receiverB.received.length >= 1, 5_000);
  const [body] = bodies(receiverB);
  t.like(body, { category: 'system', severity: 'warning', title: 'Cluster leader change: node-b leads' });
  t.regex(body.message, /^Node node-b is now the cluster leader/);
  // the demoted node does not send: notifications go out from the leader only
  t.deepEqual(bodies(receiverA), []);
  t.is(receiverB.received.length, 1);
});
