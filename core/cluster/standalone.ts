/**
 * Cluster membership as the rest of the server sees it (`app.cluster`, issue 14), and the
 * standalone member. Kept apart from index.ts so that a server without `cluster.etcd_endpoints`
 * never loads the etcd client (etcd3 and gRPC: about 0.3 s of every start).
 */
import { hostname } from 'node:os';
import type { StoreReplica, YamlStore } from '../store/types.ts';

export interface ClusterStatus {
  enabled: boolean;
  node: string;
  is_leader: boolean;
  /** The leader's node name as etcd has it; null: none right now or etcd unreachable. */
  leader: string | null;
  leader_since: string | null;
  etcd: { endpoints: string[]; reachable: boolean | null; error: string | null };
  /** The last etcd revision this node applied to its data dir (null: standalone). */
  revision: number | null;
}

export interface Cluster {
  readonly enabled: boolean;
  readonly nodeName: string;
  isLeader(): boolean;
  /** Called with true when this node starts leading, false when it must stop; returns the unsubscribe function. */
  onLeadership(listener: (leading: boolean) => void): () => void;
  status(): Promise<ClusterStatus>;
  /**
   * Cluster mode: brings the local data dir in line with the cluster once, before a store opens
   * it (the first node imports its files into an empty cluster; a joining node takes the
   * cluster's). Standalone: nothing to do.
   */
  prepareDataDir(): Promise<void>;
  /** The replication log stores commit to (undefined when standalone). */
  readonly replica: StoreReplica | undefined;
  /** Starts applying the cluster's changes through this store; returns the function that detaches it. */
  attachStore(store: Pick<YamlStore, 'applyRemote'>): () => void;
  close(): Promise<void>;
}

/** A server on its own: always the leader. */
export function standalone(nodeName = hostname()): Cluster {
  return {
    enabled: false,
    nodeName,
    isLeader: () => true,
    onLeadership: () => () => undefined,
    status: async () => ({
      enabled: false,
      node: nodeName,
      is_leader: true,
      leader: nodeName,
      leader_since: null,
      etcd: { endpoints: [], reachable: null, error: null },
      revision: null,
    }),
    prepareDataDir: async () => undefined,
    replica: undefined,
    attachStore: () => () => undefined,
    close: async () => undefined,
  };
}
