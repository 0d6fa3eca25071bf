/**
 * Cluster membership as the rest of the server sees it (`app.cluster`, issue 14). A standalone
 * server (no `cluster.etcd_endpoints`) is its own leader. In cluster mode the node campaigns on
 * etcd (leadership.ts) for as long as the process lives: the election outlives hot reloads of the
 * app, so server.ts owns it and passes it to every instance it builds.
 *
 * Singleton work (discovery sync writes, the backup schedule and retention, update jobs) asks
 * `isLeader()` before each run and may follow `onLeadership` to start and stop at once.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/schema.ts';
import { connectEtcd, type EtcdConnection } from './etcd.ts';
import { Leadership } from './leadership.ts';
import { Replicator } from './replication.ts';
import { standalone, type Cluster } from './standalone.ts';

export { standalone, type Cluster, type ClusterStatus } from './standalone.ts';

/**
 * Joins the cluster the settings name, or returns a standalone cluster when they name none. With
 * `dataDir`, the data dir is replicated through etcd (replication.ts); without it (membership
 * tests) only the election runs.
 */
export function joinCluster(settings: AppConfig['cluster'], logger: Logger, dataDir?: string): Cluster {
  const nodeName = settings.node_name || hostname();
  if (settings.etcd_endpoints.length === 0) return standalone(nodeName);
  const etcd: EtcdConnection = connectEtcd({
    endpoints: settings.etcd_endpoints,
    prefix: settings.prefix,
    call_timeout_ms: settings.call_timeout_ms,
    ...(settings.username ? { username: settings.username, password: settings.password } : {}),
    tls: {
      ...(settings.tls.ca_file ? { ca_file: settings.tls.ca_file } : {}),
      ...(settings.tls.cert_file ? { cert_file: settings.tls.cert_file } : {}),
      ...(settings.tls.key_file ? { key_file: settings.tls.key_file } : {}),
    },
  });
  const leadership = new Leadership({
    etcd: etcd.ns,
    nodeName,
    ttlS: settings.lease_ttl_s,
    callTimeoutMs: settings.call_timeout_ms,
    logger: logger.child({ component: 'cluster' }),
  });
  const replicator = dataDir
    ? new Replicator({
        etcd: etcd.ns,
        dataDir,
        nodeName,
        endpoints: settings.etcd_endpoints,
        logger: logger.child({ component: 'cluster' }),
      })
    : undefined;
  const listeners = new Set<(leading: boolean) => void>();
  const notify = (leading: boolean) => {
    for (const listener of listeners) {
      try {
        listener(leading);
      } catch (err) {
        logger.error({ err }, 'cluster: a leadership listener failed');
      }
    }
  };
  leadership.on('elected', () => notify(true));
  leadership.on('demoted', () => notify(false));
  leadership.start();
  logger.info(
    { node: nodeName, endpoints: settings.etcd_endpoints, prefix: settings.prefix, lease_ttl_s: settings.lease_ttl_s },
    'cluster mode: campaigning for the singleton work on etcd',
  );
  return {
    enabled: true,
    nodeName,
    isLeader: () => leadership.isLeader,
    onLeadership(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async status() {
      let leader: string | null = null;
      let error: string | null = null;
      try {
        leader = (await leadership.leader()) ?? null;
      } catch (err) {
        error = (err as Error).message;
      }
      return {
        enabled: true,
        node: nodeName,
        is_leader: leadership.isLeader,
        leader,
        leader_since: leadership.leaderSince?.toISOString() ?? null,
        etcd: { endpoints: settings.etcd_endpoints, reachable: error === null, error },
        revision: replicator?.revision ?? null,
      };
    },
    prepareDataDir: async () => replicator?.prepare(),
    replica: replicator,
    attachStore: (store) => replicator?.attach(store) ?? (() => undefined),
    async close() {
      await leadership.stop(); // a leader's listeners hear `false` first: the singleton work stops
      listeners.clear();
      await replicator?.close();
      etcd.close();
    },
  };
}
