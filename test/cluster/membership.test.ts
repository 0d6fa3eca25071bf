/**
 * `app.cluster` (core/cluster/index.ts): the cluster.* settings turn cluster mode on, two members
 * agree on one leader, a member that leaves hands the singleton work over, and a server without
 * etcd_endpoints is its own leader. Real 3-member etcd on loopback.
 */
import anyTest, { type TestFn } from 'ava';
import pino from 'pino';
import { joinCluster, type Cluster } from '../../core/cluster/index.ts';
import { build, testConfig } from '../helpers/build.ts';
import { etcdSkipReason, startEtcdCluster, type EtcdCluster } from '../helpers/etcd.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ etcd: EtcdCluster }>;
const skip = etcdSkipReason();
if (skip) console.warn(`SKIP cluster membership tests: ${skip}`);
const serial = skip ? test.serial.skip : test.serial;

test.before(async (t) => {
  if (!skip) t.context.etcd = await startEtcdCluster(3);
});
test.after.always(async (t) => {
  await t.context.etcd?.destroy();
});

test('without cluster.etcd_endpoints a server is standalone and its own leader', async (t) => {
  const app = await build(t);
  t.false(app.cluster.enabled);
  t.true(app.cluster.isLeader());
  t.like(await app.cluster.status(), { enabled: false, is_leader: true, etcd: { endpoints: [], reachable: null } });
});

serial(
  'the cluster settings make two members agree on one leader; the leader leaving hands the singleton work over',
  async (t) => {
    const settings = (node: string) =>
      testConfig('/nonexistent', {
        cluster: {
          etcd_endpoints: t.context.etcd.endpoints,
          prefix: `/sm-membership-${process.pid}/`,
          node_name: node,
          lease_ttl_s: 5,
        },
      }).cluster;
    const members: Cluster[] = [
      joinCluster(settings('node-a'), pino({ level: 'silent' })),
      joinCluster(settings('node-b'), pino({ level: 'silent' })),
    ];
    t.teardown(async () => {
      await Promise.all(members.map((m) => m.close()));
    });
    const changes: Array<[string, boolean]> = [];
    for (const member of members) member.onLeadership((leading) => changes.push([member.nodeName, leading]));

    const leader = await waitFor(
      () => (members.filter((m) => m.isLeader()).length === 1 ? members.find((m) => m.isLeader()) : null),
      2_000,
    );
    const follower = members.find((m) => m !== leader)!;
    for (const member of members) {
      t.like(await member.status(), {
        enabled: true,
        node: member.nodeName,
        is_leader: member === leader,
        leader: leader.nodeName,
        etcd: { reachable: true },
      });
    }
    t.deepEqual(changes, [[leader.nodeName, true]]);

    await leader.close();
    await waitFor(() => follower.isLeader(), 2_000);
    t.deepEqual(changes, [
      [leader.nodeName, true],
      [leader.nodeName, false],
      [follower.nodeName, true],
    ]);
    t.like(await follower.status(), { is_leader: true, leader: follower.nodeName });
  },
);

serial('a member whose etcd is unreachable reports it in its status and is not the leader', async (t) => {
  const config = testConfig('/nonexistent', {
    cluster: {
      etcd_endpoints: ['http://127.0.0.1:9'],
      prefix: '/sm-unreachable/',
      node_name: 'lonely',
      lease_ttl_s: 5,
      call_timeout_ms: 500,
    },
  });
  const member = joinCluster(config.cluster, pino({ level: 'silent' }));
  t.teardown(() => member.close());
  const status = await member.status();
  t.like(status, { enabled: true, is_leader: false, leader: null, etcd: { reachable: false } });
  t.truthy(status.etcd.error);
});
