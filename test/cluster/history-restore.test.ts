/**
 * A config history restore in cluster mode (API.md §4.24, issue 30 item 3): the files a restore
 * writes on one node are committed to the replication log first and reach the other nodes, as any
 * API write does; with etcd down the restore answers 502 and writes nothing. Real 1-member etcd on
 * loopback, two managers with separate data dirs and history on.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { etcdSkipReason, startEtcdCluster, waitHealthy, type EtcdCluster } from '../helpers/etcd.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { clusterNode } from '../helpers/cluster-node.ts';
import { waitFor } from '../helpers/wait.ts';
import { hasGit } from '../history/support.ts';

type Context = { etcd: EtcdCluster; fake: FakeUpstream };
const test = anyTest as TestFn<Context>;
const skip = etcdSkipReason() ?? (hasGit ? null : 'git not installed (apt-get install git)');
if (skip) console.warn(`SKIP cluster history restore tests: ${skip}`);
const serial = skip ? test.serial.skip : test.serial;

test.before(async (t) => {
  if (skip) return;
  t.context.etcd = await startEtcdCluster(1);
  t.context.fake = await startFakeUpstream();
});
test.after.always(async (t) => {
  await t.context.etcd?.destroy();
  await t.context.fake?.close();
});

/** A manager with history on (200 ms batches), in the cluster under `prefix`. */
const node = async (t: ExecutionContext<Context>, prefix: string, name: string): Promise<FastifyInstance> =>
  (
    await clusterNode(t, {
      ...t.context,
      prefix,
      name,
      tempPrefix: 'sm-cluster-history-',
      config: { history: { enabled: true, batch_ms: 200 } },
    })
  ).app;

const json = async (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
  const response = await app.inject({ method, url, ...(payload ? { payload } : {}) });
  return { status: response.statusCode, body: response.body ? response.json() : null };
};

serial('a history restore on one node is served by the other node', async (t) => {
  const prefix = `/sm-history-restore-${process.pid}/`;
  const a = await node(t, prefix, 'node-a');
  const b = await node(t, prefix, 'node-b');
  const body = (average: number) => ({ name: 'Limit', type: 'rateLimit', config: { average, burst: 50 } });
  t.is((await json(a, 'POST', '/api/middlewares', body(100))).status, 201);
  await a.history.idle();
  const created = await waitFor(async () => {
    await a.history.idle();
    const list = await json(a, 'GET', '/api/history?path=middlewares/limit');
    return list.body.length > 0 ? list.body[0] : null;
  }, 2000);
  t.is((await json(a, 'PUT', '/api/middlewares/limit', body(5))).status, 200);
  await waitFor(async () => (await json(b, 'GET', '/api/middlewares/limit')).body?.config?.average === 5, 5000);
  // B's commits so far (its batch window may fold the create and the update into one)
  const revsOnB = async () => {
    await b.history.idle();
    return ((await json(b, 'GET', '/api/history?path=middlewares/limit')).body as { rev: string }[]).map((c) => c.rev);
  };
  const beforeOnB = new Set(
    await waitFor(async () => {
      const revs = await revsOnB();
      return revs.length > 0 ? revs : null;
    }, 2000),
  );

  const restored = await json(a, 'POST', `/api/history/${created.rev}/restore`, { paths: ['middlewares/limit.yaml'] });
  t.is(restored.status, 200, JSON.stringify(restored.body));
  t.deepEqual(restored.body.restored, ['middlewares/limit.yaml']);
  t.is((await json(a, 'GET', '/api/middlewares/limit')).body.config.average, 100);
  // node B takes the restored version from the cluster, and records it as a cluster change
  await waitFor(async () => (await json(b, 'GET', '/api/middlewares/limit')).body?.config?.average === 100, 10_000);
  const onB = await waitFor(async () => {
    await b.history.idle();
    const list = await json(b, 'GET', '/api/history?path=middlewares/limit');
    return list.body.some((c: { rev: string }) => !beforeOnB.has(c.rev)) ? list.body : null;
  }, 5000);
  t.is(onB[0].author, 'cluster:node-b');
  t.false(beforeOnB.has(onB[0].rev), 'the newest commit on B is the restore');

  // etcd down: the restore is refused like an API write (502, nothing written on A), and works once it is back
  t.is((await json(a, 'PUT', '/api/middlewares/limit', body(7))).status, 200);
  await waitFor(async () => (await json(b, 'GET', '/api/middlewares/limit')).body?.config?.average === 7, 5000);
  const [member] = t.context.etcd.members;
  try {
    await member.stop();
    const refused = await json(a, 'POST', `/api/history/${created.rev}/restore`, { paths: ['middlewares/limit.yaml'] });
    t.is(refused.status, 502, JSON.stringify(refused.body));
    t.is(refused.body.id, 'upstream_unavailable');
    t.is((await json(a, 'GET', '/api/middlewares/limit')).body.config.average, 7, 'nothing was written');
  } finally {
    if (!member.running) await member.start();
  }
  await waitHealthy(member);
  const again = await waitFor(
    async () => {
      const answer = await json(a, 'POST', `/api/history/${created.rev}/restore`, {
        paths: ['middlewares/limit.yaml'],
      });
      return answer.status === 200 ? answer : null;
    },
    10_000,
    200,
  );
  t.deepEqual(again.body.restored, ['middlewares/limit.yaml']);
  await waitFor(async () => (await json(b, 'GET', '/api/middlewares/limit')).body?.config?.average === 100, 10_000);
});
