/**
 * Image update notices across a leader change (API.md §4.11 background check, cluster): only the
 * leader tells a new registry digest, and what it told is the replicated data file
 * container/image-update-notices.yaml, so the next leader does not tell the same digest again and
 * still tells a newer one, once. Real 1-member etcd on loopback, a private dockerd and registry
 * both managers talk to (one host), checks driven by GET /api/container/updates (the background
 * check runs the same code on the leader).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import anyTest, { type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { clusterNode, waitInStep } from '../helpers/cluster-node.ts';
import { etcdSkipReason, startEtcdCluster, type EtcdCluster } from '../helpers/etcd.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  buildAndPush,
  publishNewer,
  registrySkipReason,
  startRegistry,
  type Registry,
} from '../containers/registry.ts';
import { dockerSkipReason, startEngine, type Engine } from '../containers/support.ts';
import { createService, STACK } from '../containers/update-support.ts';

type Context = { etcd: EtcdCluster; fake: FakeUpstream; engine: Engine; registry: Registry };
const test = anyTest as TestFn<Context>;
const skip = etcdSkipReason() ?? dockerSkipReason() ?? registrySkipReason();
if (skip) console.warn(`SKIP cluster image update notice tests: ${skip}`);
const serial = skip ? test.serial.skip : test.serial;

test.before(async (t) => {
  if (skip) return;
  t.context.etcd = await startEtcdCluster(1);
  t.context.fake = await startFakeUpstream();
  t.context.engine = await startEngine();
  t.context.registry = await startRegistry();
});
test.after.always(async (t) => {
  await t.context.registry?.stop();
  await t.context.engine?.stop();
  await t.context.etcd?.destroy();
  await t.context.fake?.close();
});

/** The latest digests of the `image_update` events the app publishes from now on. */
function told(app: FastifyInstance): string[] {
  const digests: string[] = [];
  app.events.listen((type, data) => {
    if (type === 'image_update') digests.push((data as { latest_digest: string }).latest_digest);
  });
  return digests;
}

/** One image update check on `app` (the registry is asked every time: updates_ttl_s 0). */
async function check(app: FastifyInstance): Promise<void> {
  const reply = await app.inject({ method: 'GET', url: '/api/container/updates' });
  if (reply.statusCode !== 200) throw new Error(`GET /api/container/updates: ${reply.statusCode} ${reply.body}`);
}

serial('a new leader does not tell again the digest the old leader told, and tells a newer one once', async (t) => {
  const { engine, registry } = t.context;
  const reference = `${registry.host}/stack/svc-ok:1`;
  const v1 = await buildAndPush(engine, reference, { content: 'v1' });
  await createService(engine.docker, { name: 'svc-ok', image: reference });

  const prefix = `/sm-image-notices-${process.pid}/`;
  const config = {
    docker: { host: '', socket: engine.socket },
    stack: { containers: STACK, project: '' },
    containers: { stop_timeout_s: 5, updates_ttl_s: 0, update_stable_s: 1, updates_check_interval_s: 0 },
  };
  const node = (name: string) =>
    clusterNode(t, { ...t.context, prefix, name, config, tempPrefix: 'sm-cluster-images-' });
  const a = await node('node-a');
  await waitFor(() => a.app.cluster.isLeader(), 10_000);
  const b = await node('node-b');
  const events = { a: told(a.app), b: told(b.app) };

  // up to date: nothing is told
  await Promise.all([check(a.app), check(b.app)]);
  t.deepEqual(events, { a: [], b: [] });

  // a newer digest: the leader tells it, once; the other node (a GET there too) tells nothing
  const v2 = await publishNewer(engine, reference, v1.id, { content: 'v2' });
  await Promise.all([check(a.app), check(b.app)]);
  await Promise.all([check(a.app), check(b.app)]);
  t.deepEqual(events.a, [v2.digest]);
  t.deepEqual(events.b, [], 'a node that does not lead told an update');

  // the cluster has brought B's data dir in step with A's (whatever A wrote that is replicated)
  await waitInStep(a, b, 2_000);
  // A shuts down cleanly: B leads at once
  await a.stop();
  await waitFor(() => b.app.cluster.isLeader(), 10_000);

  // the same digest: B does not tell it again
  await check(b.app);
  await check(b.app);
  t.deepEqual(events.b, [], 'the new leader told again an update the old leader had told');

  // a newer digest still: B tells it, once
  const v3 = await publishNewer(engine, reference, v1.id, { content: 'v3' });
  await check(b.app);
  await check(b.app);
  t.deepEqual(events.b, [v3.digest]);
  // the record is the replicated data file: B's holds the digest it told
  const record = parse(await readFile(path.join(b.dataDir, 'container', 'image-update-notices.yaml'), 'utf8'));
  t.deepEqual(
    record.notices.map((n: { service: string; latest_digest: string }) => [n.service, n.latest_digest]),
    [['svc-ok', v3.digest]],
  );
  // no collection owns data/container/: the record is not judged, nor listed as an invalid file
  t.deepEqual(b.app.store.invalidFiles(), []);
  const status = await b.app.inject({ url: '/api/proxy-config/status' });
  t.deepEqual(status.json().invalid_files, [], status.body);
});
