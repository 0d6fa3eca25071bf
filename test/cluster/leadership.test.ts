/**
 * Leader election for the singleton work (issue 14) against a real 3-member etcd cluster on
 * loopback: one leader, hand-over on stop, take-over after a SIGKILL, self-demotion when etcd is
 * gone and re-election when it returns, and elections with a member down.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { connectEtcd } from '../../core/cluster/etcd.ts';
import { Leadership } from '../../core/cluster/leadership.ts';
import { etcdSkipReason, startEtcdCluster, waitHealthy, type EtcdCluster } from '../helpers/etcd.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ etcd: EtcdCluster }>;
const skip = etcdSkipReason();
if (skip) console.warn(`SKIP cluster leadership tests: ${skip}`);
const serial = skip ? test.serial.skip : test.serial;
const here = path.dirname(fileURLToPath(import.meta.url));
const TTL_S = 5;

test.before(async (t) => {
  if (!skip) t.context.etcd = await startEtcdCluster(3);
});
test.after.always(async (t) => {
  await t.context.etcd?.destroy();
});

/** Silent unless TEST_LOG is set (then the election's own log goes to stderr, to see why a test waits). */
const testLogger = (node: string) =>
  pino({ level: process.env.TEST_LOG ? 'debug' : 'silent', base: { node } }, pino.destination(2));

let prefixes = 0;
/** A fresh election per test: its own key prefix. */
const newPrefix = () => `/sm-test-${process.pid}-${(prefixes += 1)}/`;

interface Node {
  name: string;
  leadership: Leadership;
  elections: number;
}

/**
 * Starts in-process nodes on their own etcd connections. Every `elected` checks the invariant
 * that matters: no other node believes it leads at that moment.
 */
function startNodes(
  t: ExecutionContext<{ etcd: EtcdCluster }>,
  prefix: string,
  names: string[],
  violations: string[],
): Node[] {
  const nodes: Node[] = [];
  for (const name of names) {
    const etcd = connectEtcd({ endpoints: t.context.etcd.endpoints, prefix, call_timeout_ms: 2000 });
    const leadership = new Leadership({
      etcd: etcd.ns,
      nodeName: name,
      ttlS: TTL_S,
      callTimeoutMs: 2000,
      logger: testLogger(name),
    });
    const node: Node = { name, leadership, elections: 0 };
    leadership.on('elected', () => {
      node.elections += 1;
      for (const other of nodes)
        if (other !== node && other.leadership.isLeader) violations.push(`${name} elected while ${other.name} leads`);
    });
    leadership.start();
    t.teardown(async () => {
      await leadership.stop();
      etcd.close();
    });
    nodes.push(node);
  }
  return nodes;
}

const leaders = (nodes: Node[]) => nodes.filter((n) => n.leadership.isLeader);

serial('three nodes elect exactly one leader, and every node reads its name from etcd', async (t) => {
  const violations: string[] = [];
  const nodes = startNodes(t, newPrefix(), ['a', 'b', 'c'], violations);
  const [leader] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), 2_000);
  t.is(leaders(nodes).length, 1);
  for (const node of nodes) t.is(await node.leadership.leader(), leader!.name);
  t.true(leader!.leadership.remainingMs > 0);
  t.is(leader!.leadership.leaderSince instanceof Date, true);
  for (const node of nodes.filter((n) => n !== leader)) {
    t.is(node.leadership.state, 'candidate');
    t.is(node.leadership.remainingMs, 0);
  }
  t.deepEqual(violations, []);
});

serial(
  'a leader that stops hands over at once: another node is elected and the stopped one never leads again',
  async (t) => {
    const violations: string[] = [];
    const nodes = startNodes(t, newPrefix(), ['a', 'b', 'c'], violations);
    const [first] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), 2_000);
    const stoppedAt = Date.now();
    await first!.leadership.stop();
    t.is(first!.leadership.state, 'stopped');
    t.false(first!.leadership.isLeader);
    const [second] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), 2_000);
    t.log(
      `hand-over after a clean stop: ${Date.now() - stoppedAt} ms (revoke frees the key; TTL ${TTL_S} s not waited for)`,
    );
    t.not(second!.name, first!.name);
    t.is(await second!.leadership.leader(), second!.name);
    t.deepEqual(violations, []);
  },
);

serial(
  'a SIGKILLed leader process is replaced once its lease expires, and the new leader is the only one',
  async (t) => {
    const prefix = newPrefix();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(here, 'leader-node.ts'),
        t.context.etcd.endpoints.join(','),
        prefix,
        'doomed',
        String(TTL_S),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    const events: Array<{ event: string; at: number }> = [];
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) events.push(JSON.parse(line) as { event: string; at: number });
    });
    await waitFor(() => events.some((e) => e.event === 'elected'), 5_000);

    const violations: string[] = [];
    const nodes = startNodes(t, prefix, ['b', 'c'], violations);
    await waitFor(async () => (await nodes[0]!.leadership.leader()) === 'doomed', 2_000);
    t.deepEqual(leaders(nodes), [], 'no one is elected while the child leads');

    const killedAt = Date.now();
    child.kill('SIGKILL');
    const [next] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), TTL_S * 1000);
    const failoverMs = Date.now() - killedAt;
    t.log(`fail-over after SIGKILL of the leader: ${failoverMs} ms (lease TTL ${TTL_S} s)`);
    t.is(await next!.leadership.leader(), next!.name);
    t.deepEqual(violations, []);
  },
);

serial(
  'a leader cut off from etcd demotes itself; once etcd is back a node is elected again without a restart',
  async (t) => {
    const violations: string[] = [];
    const nodes = startNodes(t, newPrefix(), ['a', 'b'], violations);
    const [leader] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), 2_000);
    const demoted = new Promise<string>((resolve) => leader!.leadership.once('demoted', resolve));
    const remainingAtStop = leader!.leadership.remainingMs;
    const stoppedAt = Date.now();
    await Promise.all(t.context.etcd.members.map((m) => m.stop('SIGKILL')));
    const reason = await demoted;
    const demotedAfter = Date.now() - stoppedAt;
    t.log(
      `demoted ${demotedAfter} ms after every etcd member was killed (it had ${remainingAtStop} ms of lease left; TTL ${TTL_S} s): ${reason}`,
    );
    t.regex(reason, /not renewed|lease lost/);
    t.deepEqual(leaders(nodes), [], 'no node leads while etcd is gone');

    await Promise.all(t.context.etcd.members.map((m) => m.start()));
    await Promise.all(t.context.etcd.members.map((m) => waitHealthy(m)));
    const [back] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), 10_000);
    t.is(await back!.leadership.leader(), back!.name);
    t.deepEqual(violations, []);
  },
);

serial('with one etcd member down, nodes still elect a leader and hand over', async (t) => {
  const [down] = t.context.etcd.members;
  await down!.stop('SIGTERM');
  t.teardown(async () => {
    await down!.start();
    await waitHealthy(down!);
  });
  const violations: string[] = [];
  const nodes = startNodes(t, newPrefix(), ['a', 'b'], violations);
  const [first] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), 5_000);
  await first!.leadership.stop();
  const [second] = await waitFor(() => (leaders(nodes).length === 1 ? leaders(nodes) : null), 5_000);
  t.not(second!.name, first!.name);
  t.deepEqual(violations, []);
});
