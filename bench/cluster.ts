/**
 * Several managers on etcd (issue 14): the time from a write on node A to the object being served
 * by node B, and the time another node takes the singleton work over when the leader leaves.
 * Prints figures; not a test.
 *
 *   npx tsx bench/cluster.ts [--writes 200] [--lease 5]
 *
 * A real 3-member etcd on loopback (Debian's etcd, as the tests start it), two apps on separate
 * data dirs in this process. Each write is a POST on A; B is polled (GET, every 2 ms) until it
 * answers 200. Failover: the leader's app and membership are closed (a clean stop, the lease is
 * revoked), then the time until the other node leads; after a crash the other node waits for the
 * lease TTL instead (test/cluster/leadership.test.ts measures that with a SIGKILL).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildApp } from '../core/app.ts';
import { joinCluster } from '../core/cluster/index.ts';
import { builtinGroups } from '../plugins/index.ts';
import { testConfig } from '../test/helpers/build.ts';
import { startEtcdCluster } from '../test/helpers/etcd.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
};
const writes = arg('writes', 200);
const lease = arg('lease', 5);

const root = await mkdtemp(path.join(tmpdir(), 'sm-bench-cluster-'));
const etcd = await startEtcdCluster(3);
const prefix = `/sm-bench-${process.pid}/`;

async function node(name: string) {
  const dir = path.join(root, name);
  const config = testConfig(dir, {
    auth: { mode: 'off' },
    cluster: { etcd_endpoints: etcd.endpoints, prefix, node_name: name, lease_ttl_s: lease },
  });
  const cluster = joinCluster(config.cluster, pino({ level: 'silent' }), dir);
  const app = await buildApp({ config, groups: builtinGroups, logger: false, cluster });
  await app.ready();
  return { app, cluster, name };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

try {
  const a = await node('node-a');
  const b = await node('node-b');
  const delays: number[] = [];
  for (let i = 0; i < writes; i++) {
    const started = performance.now();
    const created = await a.app.inject({
      method: 'POST',
      url: '/api/middlewares',
      payload: { name: `Bench ${i}`, type: 'ipAllowList', config: { sourceRange: [`10.${i % 250}.0.0/16`] } },
    });
    if (created.statusCode !== 201) throw new Error(`write ${i}: ${created.statusCode} ${created.body}`);
    const id = created.json().id as string;
    for (;;) {
      const got = await b.app.inject({ method: 'GET', url: `/api/middlewares/${id}` });
      if (got.statusCode === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    delays.push(performance.now() - started);
  }
  delays.sort((x, y) => x - y);
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(
    `write on A → served by B, ${writes} writes: p50 ${fmt(percentile(delays, 0.5))}, p99 ${fmt(percentile(delays, 0.99))}, max ${fmt(delays[delays.length - 1])}`,
  );

  // failover: wait for a leader, stop it, time until the other leads
  while (!a.cluster.isLeader() && !b.cluster.isLeader()) await new Promise((resolve) => setTimeout(resolve, 10));
  const [leader, follower] = a.cluster.isLeader() ? [a, b] : [b, a];
  const stopped = performance.now();
  await leader.app.close();
  await leader.cluster.close();
  while (!follower.cluster.isLeader()) await new Promise((resolve) => setTimeout(resolve, 2));
  console.log(
    `clean stop of the leader (${leader.name}) → ${follower.name} leads after ${fmt(performance.now() - stopped)} (lease TTL ${lease} s)`,
  );
  await follower.app.close();
  await follower.cluster.close();
} finally {
  await etcd.destroy();
  await rm(root, { recursive: true, force: true });
}
