/**
 * Discovered fields on two managers of one etcd cluster (issue 24 item 6): the leader writes what
 * Pangolin reports, the follower serves it from the replicated file. When a router's rule changes
 * upstream and when the router disappears, both nodes must answer the same rule, host and status
 * under the same ETag, and DELETE must answer the same on either node; a hand edit of discovered
 * fields on either node is put back from the upstream on both. Throughout, one ETag never stands
 * for two different resources. Real 3-member etcd on loopback, a fake Pangolin.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { etcdSkipReason, startEtcdCluster, type EtcdCluster } from '../helpers/etcd.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { clusterNode, type ClusterNode } from '../helpers/cluster-node.ts';
import { waitFor } from '../helpers/wait.ts';
import { writeSources } from '../resources/support.ts';

type Context = { etcd: EtcdCluster; fake: FakeUpstream };
const test = anyTest as TestFn<Context>;
const skip = etcdSkipReason();
if (skip) console.warn(`SKIP cluster discovered-fields tests: ${skip}`);
const serial = skip ? test.serial.skip : test.serial;

test.before(async (t) => {
  if (skip) return;
  t.context.etcd = await startEtcdCluster(3);
  t.context.fake = await startFakeUpstream();
});
test.after.always(async (t) => {
  await t.context.etcd?.destroy();
  await t.context.fake?.close();
});

const GRAFANA = '2-grafana-router';
const NEXTCLOUD = '1-nextcloud-router';
/** Replication delay plus a sync, with room for a busy 2-core machine. */
const REPLICATION_MS = 20_000;
/** What a resource's ETag covers: every stored field (computed ones depend on other objects). */
const STORED = [
  'name',
  'router',
  'source',
  'status',
  'missing_since',
  'rule',
  'host',
  'hosts',
  'entrypoints',
  'tls',
  'priority',
  'upstream_service',
  'upstream_middlewares',
  'middlewares',
  'external_middlewares',
  'service_id',
  'config',
] as const;

let prefixes = 0;
const newPrefix = () => `/sm-discovered-${process.pid}-${++prefixes}/`;

type Node = ClusterNode;

/** A manager in the cluster under `prefix`. */
const node = (t: ExecutionContext<Context>, prefix: string, name: string): Promise<Node> =>
  clusterNode(t, {
    ...t.context,
    prefix,
    name,
    // an hour between polls: what changes a resource here is the test's sync or the change under test
    prepare: (dir) => writeSources(dir, t.context.fake, { pollIntervalS: 3600 }),
  });

async function call(app: FastifyInstance, method: 'GET' | 'DELETE', url: string, headers = {}) {
  const response = await app.inject({ method, url, headers });
  return {
    status: response.statusCode,
    body: response.body ? response.json() : null,
    etag: response.headers.etag as string | undefined,
  };
}

/**
 * Reads one resource on every node and remembers, per ETag, the stored fields answered under it:
 * an ETag seen again with other fields fails the test (one ETag, one answer).
 */
function observer(t: ExecutionContext<Context>, nodes: Node[]) {
  const answers = new Map<string, { node: string; fields: string }>();
  return async (id: string) =>
    Promise.all(
      nodes.map(async (n) => {
        const got = await call(n.app, 'GET', `/api/resources/${id}`);
        if (got.status === 200 && got.etag) {
          const fields = JSON.stringify(STORED.map((key) => got.body[key]));
          const seen = answers.get(got.etag);
          if (seen && seen.fields !== fields)
            t.fail(`ETag ${got.etag} stands for two answers: ${seen.node} ${seen.fields} / ${n.name} ${fields}`);
          answers.set(got.etag, { node: n.name, fields });
        }
        return got;
      }),
    );
}

/** The two nodes once exactly one of them leads: [leader, follower]. */
async function roles(a: Node, b: Node): Promise<[Node, Node]> {
  return waitFor(() => {
    const [la, lb] = [a.app.cluster.isLeader(), b.app.cluster.isLeader()];
    return la !== lb ? (la ? [a, b] : [b, a]) : null;
  }, 30_000);
}

/** Waits until both nodes answer `id` with status 200, the same ETag and fields that pass `check`. */
async function agreed(
  look: (id: string) => Promise<{ status: number; body: any; etag?: string }[]>,
  id: string,
  check: (body: any) => boolean,
) {
  let last: unknown;
  return waitFor(async () => {
    const both = await look(id);
    last = both.map((x) => ({ status: x.status, etag: x.etag, host: x.body?.host, status_: x.body?.status }));
    return both.every((x) => x.status === 200 && check(x.body)) && both[0].etag === both[1].etag ? both : null;
  }, REPLICATION_MS).catch((err) => {
    throw new Error(`${(err as Error).message}; last answers: ${JSON.stringify(last)}`);
  });
}

serial(
  'a router changed, then removed upstream: both nodes agree on rule, host, status, ETag and DELETE',
  async (t) => {
    const { fake } = t.context;
    fake.state.pangolinFile = 'traefik-config.json';
    fake.state.pangolinEdit = null;
    const prefix = newPrefix();
    const a = await node(t, prefix, 'node-a');
    const b = await node(t, prefix, 'node-b');
    const [leader, follower] = await roles(a, b);
    const look = observer(t, [leader, follower]);
    await leader.app.resources.syncNow();
    await agreed(look, GRAFANA, (r) => r.host === 'grafana.example.com' && r.status === 'active');

    // Pangolin changes the router's rule
    fake.state.pangolinEdit = (text) => text.replaceAll('grafana.example.com', 'grafana-new.example.com');
    t.true((await leader.app.resources.syncNow()).written > 0);
    let started = performance.now();
    const [onLeader, onFollower] = await agreed(look, GRAFANA, (r) => r.host === 'grafana-new.example.com');
    t.log(`changed rule served alike on both nodes after ${Math.round(performance.now() - started)} ms`);
    for (const got of [onLeader, onFollower]) {
      t.is(got.body.rule, 'Host(`grafana-new.example.com`)');
      t.deepEqual(got.body.hosts, ['grafana-new.example.com']);
    }
    const file = (n: Node) => readFile(path.join(n.dataDir, 'resources', `${GRAFANA}.yaml`), 'utf8');
    t.is(await file(follower), await file(leader), 'the same bytes on both nodes');

    // the router disappears: disabled on both, so DELETE is allowed on either
    fake.state.pangolinEdit = null;
    fake.state.pangolinFile = 'traefik-config-changed.json';
    t.true((await leader.app.resources.syncNow()).written > 0);
    started = performance.now();
    const [gone] = await agreed(look, GRAFANA, (r) => r.status === 'disabled');
    t.log(`removed router disabled on both nodes after ${Math.round(performance.now() - started)} ms`);
    t.truthy(gone.body.missing_since);
    // an active resource is refused alike on both nodes
    for (const n of [leader, follower]) {
      const refused = await call(n.app, 'DELETE', `/api/resources/${NEXTCLOUD}`);
      t.is(refused.status, 409, `${n.name}: ${JSON.stringify(refused.body)}`);
      t.is(refused.body.id, 'resource_active');
    }
    const deleted = await call(follower.app, 'DELETE', `/api/resources/${GRAFANA}`, { 'if-match': gone.etag });
    t.is(deleted.status, 204, JSON.stringify(deleted.body));
    await waitFor(
      async () => (await call(leader.app, 'GET', `/api/resources/${GRAFANA}`)).status === 404,
      REPLICATION_MS,
    );
  },
);

serial('a hand edit of discovered fields on either node is put back from the upstream on both', async (t) => {
  const { fake } = t.context;
  fake.state.pangolinFile = 'traefik-config.json';
  fake.state.pangolinEdit = null;
  const prefix = newPrefix();
  const a = await node(t, prefix, 'node-a');
  const b = await node(t, prefix, 'node-b');
  const [leader, follower] = await roles(a, b);
  const look = observer(t, [leader, follower]);
  await leader.app.resources.syncNow();
  await agreed(look, NEXTCLOUD, (r) => r.host === 'cloud.example.com');
  const file = (n: Node) => path.join(n.dataDir, 'resources', `${NEXTCLOUD}.yaml`);

  for (const editor of [follower, leader]) {
    const text = await readFile(file(editor), 'utf8');
    const edited = text.replaceAll('cloud.example.com', `evil-${editor.name}.example.com`);
    t.not(edited, text);
    await writeFile(file(editor), `# edited on ${editor.name}\n${edited}`);
    // the edit reaches the file of the other node, then the upstream's values come back on both
    const [x, y] = await waitFor(async () => {
      const both = await Promise.all([readFile(file(leader), 'utf8'), readFile(file(follower), 'utf8')]);
      const back = both.every((s) => s.includes(`# edited on ${editor.name}`) && !s.includes('evil-'));
      return back && both[0] === both[1] ? both : null;
    }, REPLICATION_MS);
    t.is(x, y);
    const [p, q] = await agreed(look, NEXTCLOUD, (r) => r.host === 'cloud.example.com');
    t.is(p.body.rule, 'Host(`cloud.example.com`)');
    t.is(q.body.rule, 'Host(`cloud.example.com`)');
  }
});
