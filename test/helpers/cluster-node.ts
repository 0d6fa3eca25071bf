/**
 * clusterNode(t, …): one manager of a multi-node test (test/cluster/) — its own data dir, cluster
 * mode on a real etcd (helpers/etcd.ts) under a per-test key prefix, the fake Pangolin as its active
 * source, auth off; the app and its membership are closed when the test ends.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../core/app.ts';
import { joinCluster } from '../../core/cluster/index.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { tempDir, testConfig } from './build.ts';
import type { EtcdCluster } from './etcd.ts';
import type { FakeUpstream } from './fake-upstream.ts';
import { waitFor } from './wait.ts';

export interface ClusterNode {
  name: string;
  app: FastifyInstance;
  dataDir: string;
  /** Closes the app and leaves the cluster (a clean shutdown: the lease is revoked, another node leads at once). */
  stop(): Promise<void>;
}

export interface ClusterNodeOptions {
  etcd: EtcdCluster;
  fake: FakeUpstream;
  /** The cluster's etcd key prefix: nodes with the same prefix are one cluster. */
  prefix: string;
  /** `cluster.node_name`. */
  name: string;
  /** Default: `data` in a fresh temp dir (a restart passes the dir of the node it replaces). */
  dataDir?: string;
  /** The fresh temp dir's name prefix. */
  tempPrefix?: string;
  /** Settings merged over the node's (top-level keys, as testConfig does), e.g. `{history: {...}}`. */
  config?: Record<string, unknown>;
  /** Runs on the data dir before the app is built (e.g. writing its datasources.yaml). */
  prepare?: (dataDir: string) => Promise<void>;
  /** The app's clock (default: the real one). */
  now?: () => Date;
}

/** A manager in the cluster under `options.prefix`, ready. */
export async function clusterNode(t: ExecutionContext, options: ClusterNodeOptions): Promise<ClusterNode> {
  const { etcd, fake, prefix, name } = options;
  const dir = options.dataDir ?? path.join(await tempDir(t, options.tempPrefix), 'data');
  await options.prepare?.(dir);
  const config = testConfig(dir, {
    auth: { mode: 'off' },
    // every node fetches the same Pangolin: the provider documents can be compared
    datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' },
    cluster: {
      etcd_endpoints: etcd.endpoints,
      prefix,
      node_name: name,
      lease_ttl_s: 5,
      call_timeout_ms: 2_000,
    },
    ...options.config,
  });
  const cluster = joinCluster(config.cluster, pino({ level: 'silent' }), dir);
  const app = await buildApp({ config, groups: builtinGroups, logger: false, cluster, now: options.now });
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      await app.close();
      await cluster.close();
    })());
  t.teardown(stop);
  await app.ready();
  return { name, app, dataDir: dir, stop };
}

/** The replicated files of a data dir (not hidden, not temp files, not the audit log) and their bytes. */
export async function replicatedFiles(dir: string, under = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  // entries come and go while the nodes work (a write's <collection>.lock dir, temp files): one gone is skipped
  const gone = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    return null;
  };
  const entries = await readdir(path.join(dir, under), { withFileTypes: true }).catch(gone);
  for (const entry of entries ?? []) {
    const relative = under ? `${under}/${entry.name}` : entry.name;
    const skipped = ['.tmp', '.lock'].some((suffix) => entry.name.endsWith(suffix));
    if (entry.name.startsWith('.') || skipped || entry.name.startsWith('audit.log')) continue;
    if (entry.isDirectory()) Object.assign(out, await replicatedFiles(dir, relative));
    else if (entry.isFile()) {
      const text = await readFile(path.join(dir, relative), 'utf8').catch(gone);
      if (text !== null) out[relative] = text;
    }
  }
  return out;
}

/** Waits until the cluster has brought `b`'s data dir in step with `a`'s (the same replicated files, byte for byte). */
export async function waitInStep(a: ClusterNode, b: ClusterNode, expectedMs = 1_000): Promise<void> {
  const sorted = (files: Record<string, string>) => JSON.stringify(Object.entries(files).sort());
  await waitFor(
    async () => sorted(await replicatedFiles(a.dataDir)) === sorted(await replicatedFiles(b.dataDir)),
    expectedMs,
    50,
  );
}
