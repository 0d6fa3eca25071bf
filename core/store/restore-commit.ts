/**
 * A history restore in cluster mode is committed to the replication log before it is written, as an
 * API write is (API.md §4.24): etcd unreachable → StoreError `replica_unavailable` (the API answers
 * 502) and nothing written; another node's newer version → committed again over it (a restore is
 * the operator's explicit choice of bytes: last writer wins, as for raw files).
 */
import type { StoreReplica } from './types.ts';

/** Commits `bytes` of `relative` (null: removal) to the replica; gives up after 5 lost races. */
export async function commitRestore(
  replica: StoreReplica | undefined,
  relative: string,
  bytes: Buffer | null,
): Promise<void> {
  if (!replica) return;
  // `stale` has brought this node up to the cluster's version: committing again then succeeds
  for (let attempt = 0; attempt < 5; attempt++) if ((await replica.commit(relative, bytes)) === 'ok') return;
}
