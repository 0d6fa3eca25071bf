/**
 * Applies one sync's routers to the stored resources: `reconcile` (datasource/discovery.ts) decides,
 * this writes. Only resources whose discovered fields or status changed are written, plus files
 * whose discovered fields were edited by hand (they are put back, API.md §3.3).
 */
import picomatch from 'picomatch';
import { reconcile, type ReconcileOptions } from './discovery.ts';
import { slugify } from '../../model/ids.ts';
import { type ResourceRecord, type UpstreamRouter } from '../../model/upstream-routers.ts';
import { discoveredOf, sameDiscovered } from './record.ts';
import type { ResourceRepository } from './repository.ts';

export type ApplyOptions = Omit<ReconcileOptions, 'emptyStreak'> & {
  emptyStreak: number;
  /**
   * Called once an applied sync's records are in memory, before their files are written: what
   * depends on them (the provider config) need not wait for thousands of fsyncs.
   */
  onStaged?: () => Promise<void>;
  /** Aborted at shutdown: files not written yet are left for the next sync. */
  signal?: AbortSignal;
};

export interface ApplyResult {
  /** false when an unconfirmed empty answer was held back (nothing changed) */
  applied: boolean;
  heldBack: boolean;
  emptyStreak: number;
  written: number;
  created: string[];
  updated: string[];
  disabled: string[];
  reactivated: string[];
}

/**
 * A file holding overrides only (no `router` yet, e.g. written by hand before the first sync) is
 * linked to the router whose slug equals its id, so its settings apply instead of a twin resource.
 */
function linkPending(existing: ResourceRecord[], routers: UpstreamRouter[], options: ApplyOptions): ResourceRecord[] {
  const pending = new Map(existing.filter((r) => r.router === '').map((r) => [r.id, r]));
  if (pending.size === 0) return existing;
  const claimed = new Set(existing.map((r) => r.router));
  const excluded = options.exclude.length > 0 ? picomatch(options.exclude, { dot: true }) : () => false;
  const links = new Map<string, UpstreamRouter>();
  for (const router of routers) {
    if (
      router.provider === 'internal' ||
      claimed.has(router.key) ||
      excluded(router.name) ||
      options.isOwnRouter?.(router.key)
    )
      continue;
    const id = slugify(router.name, 'resource');
    if (pending.has(id) && !links.has(id)) links.set(id, router);
  }
  return existing.map((r) => {
    const router = links.get(r.id);
    return router ? { ...r, router: router.key, name: router.name } : r;
  });
}

/** Reconciles and writes; never drops overrides. */
export async function applyRouters(
  repository: ResourceRepository,
  routers: UpstreamRouter[],
  options: ApplyOptions,
): Promise<ApplyResult> {
  // own resources (API.md §4.24) are never matched, disabled or rewritten by discovery
  const all = repository.records();
  const before = all.filter((r) => r.source !== 'local');
  const reservedIds = all.filter((r) => r.source === 'local').map((r) => r.id);
  // a linked pending file turns active, so reconcile always lists it among the upserts
  const result = reconcile(linkPending(before, routers, options), routers, { ...options, reservedIds });
  const outcome: ApplyResult = {
    applied: result.applied,
    heldBack: result.suspiciousEmpty && !result.applied,
    emptyStreak: result.newEmptyStreak,
    written: 0,
    created: [],
    updated: [],
    disabled: [],
    reactivated: [],
  };
  if (!result.applied) return outcome;

  const previous = new Map(before.map((r) => [r.id, r]));
  const desired = new Map(result.upserts.map((r) => [r.id, r]));
  for (const record of before) {
    if (!desired.has(record.id) && repository.drifted(record.id)) desired.set(record.id, record);
  }

  const writes: { record: ResourceRecord; isNew: boolean }[] = [];
  for (const record of [...desired.values()].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const old = previous.get(record.id);
    if (old && sameDiscovered(discoveredOf(old), discoveredOf(record)) && !repository.drifted(record.id)) continue;
    writes.push({ record, isNew: old === undefined });
    if (!old) outcome.created.push(record.id);
    else if (old.status === 'active' && record.status === 'disabled') outcome.disabled.push(record.id);
    else if (old.status === 'disabled' && record.status === 'active') outcome.reactivated.push(record.id);
    else if (!sameDiscovered(discoveredOf(old), discoveredOf(record))) outcome.updated.push(record.id);
  }
  outcome.written = (
    await repository.writeDiscovered(writes, { onStaged: options.onStaged, signal: options.signal })
  ).filter(Boolean).length;
  return outcome;
}
