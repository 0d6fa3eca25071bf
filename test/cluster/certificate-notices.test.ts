/**
 * Certificate expiry notices across a leader change (API.md §4.21 `certs`, cluster; issue 28/30
 * follow-up): only the leader announces a threshold, and what it announced is a replicated data
 * file, so the next leader neither repeats "expires in 14 days" nor misses the 3-day notice. Real
 * 1-member etcd on loopback, two managers with separate data dirs reading one acme.json, one clock
 * the test moves (days pass without waiting).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import anyTest, { type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import type { CertificateEvent } from '../../plugins/metrics/index.ts';
import { tempDir } from '../helpers/build.ts';
import { acmeJson, makeCertificate } from '../helpers/certificates.ts';
import { clusterNode, waitInStep } from '../helpers/cluster-node.ts';
import { etcdSkipReason, startEtcdCluster, type EtcdCluster } from '../helpers/etcd.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { waitFor } from '../helpers/wait.ts';

type Context = { etcd: EtcdCluster; fake: FakeUpstream };
const test = anyTest as TestFn<Context>;
const skip = etcdSkipReason();
if (skip) console.warn(`SKIP cluster certificate notice tests: ${skip}`);
const serial = skip ? test.serial.skip : test.serial;
const DAY_MS = 86_400_000;

test.before(async (t) => {
  if (skip) return;
  t.context.etcd = await startEtcdCluster(1);
  t.context.fake = await startFakeUpstream();
});
test.after.always(async (t) => {
  await t.context.etcd?.destroy();
  await t.context.fake?.close();
});

/** The `certificate` events the app publishes from now on. */
function recorded(app: FastifyInstance): CertificateEvent[] {
  const events: CertificateEvent[] = [];
  app.events.listen((type, data) => {
    if (type === 'certificate') events.push(data as CertificateEvent);
  });
  return events;
}

/** Two checks in a row: the second starts after whatever was running when called. */
async function twoChecks(app: FastifyInstance): Promise<void> {
  await app.certificates.check();
  await app.certificates.check();
}

serial(
  'a new leader does not announce again the threshold the old leader announced, and announces the next one',
  async (t) => {
    const dir = await tempDir(t, 'sm-cluster-certs-');
    const acmePath = path.join(dir, 'acme.json');
    await writeFile(acmePath, '', { mode: 0o600 }); // Traefik's before its first certificate
    let clock = Date.now();
    const now = () => new Date(clock);
    const prefix = `/sm-cert-notices-${process.pid}/`;
    const config = { proxy: { acme_path: acmePath }, certs: { check_interval_s: 3600 } };
    const node = (name: string) =>
      clusterNode(t, { ...t.context, prefix, name, now, config, tempPrefix: 'sm-cluster-certs-' });
    const a = await node('node-a');
    await waitFor(() => a.app.cluster.isLeader(), 10_000);
    const b = await node('node-b');
    const events = { a: recorded(a.app), b: recorded(b.app) };

    // 10 days left: the leader announces threshold 14, the other node nothing
    const certificate = makeCertificate('mail.example.test', new Date(clock + 10 * DAY_MS + 3_600_000));
    await writeFile(acmePath, acmeJson([certificate]), { mode: 0o600 });
    await Promise.all([twoChecks(a.app), twoChecks(b.app)]);
    const notice = (daysLeft: number, threshold: number) => ({
      cn: 'mail.example.test',
      not_after: new Date(certificate.notAfter * 1000).toISOString(),
      days_left: daysLeft,
      threshold,
      source: 'acme',
    });
    t.deepEqual(events.a, [notice(10, 14)]);
    t.deepEqual(events.b, []);

    // the cluster has brought B's data dir in step with A's (whatever A wrote that is replicated)
    await waitInStep(a, b, 1_000);
    // A shuts down cleanly: B leads at once
    await a.stop();
    await waitFor(() => b.app.cluster.isLeader(), 10_000);

    // the same certificate at the same threshold: B does not announce it again
    await twoChecks(b.app);
    await twoChecks(b.app);
    t.deepEqual(events.b, [], 'the new leader repeated a notice the old leader had sent');

    // 8 days later (2 days left) the next threshold is crossed: B announces it, once
    clock += 8 * DAY_MS;
    await twoChecks(b.app);
    await twoChecks(b.app);
    t.deepEqual(events.b, [notice(2, 3)]);
    // the record is the replicated data file: B's now holds the 3-day notice
    const record = parse(await readFile(path.join(b.dataDir, 'metrics', 'certificate-notices.yaml'), 'utf8'));
    t.deepEqual(record.notices, [{ cn: 'mail.example.test', not_after: certificate.notAfter, threshold: 3 }]);
  },
);
