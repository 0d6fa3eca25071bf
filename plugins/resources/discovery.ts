/**
 * Discovery (API.md §4.4): applies one sync's upstream routers to the stored resources. Pure: no
 * I/O, the caller (sync.ts, run by the poller) passes the clock and stores the result.
 */
import picomatch from 'picomatch';
import { stringifyCanonical } from '../../model/lossless-json.ts';
import { defaultResourceConfig } from '../../model/types.ts';
import { slugify } from '../../model/ids.ts';
import { DISCOVERED_KEYS } from './record.ts';
import {
  allocateId,
  hostsOf,
  type ResourceRecord,
  type SourceKind,
  type UpstreamRouter,
} from '../../model/upstream-routers.ts';

export interface ReconcileOptions {
  source: SourceKind;
  /** globs of `discovery.exclude`, matched against the key without `@provider` */
  exclude: string[];
  /** ISO timestamp used for `missing_since` */
  now: string;
  /** `discovery.empty_confirmations` */
  emptyConfirmations: number;
  /** consecutive empty answers before this one (`last_sync.empty_streak`) */
  emptyStreak: number;
  /** whether the last applied sync had at least one router */
  lastWasNonEmpty: boolean;
  /** routers we emit ourselves (Traefik mode), given the full key; see ownObjectMatcher */
  isOwnRouter?: (key: string) => boolean;
  /** ids a new resource must not take: the own (local) resources, which `existing` leaves out */
  reservedIds?: Iterable<string>;
}

export interface ReconcileResult {
  /** new resources and those whose discovered fields, status or missing_since changed, by id */
  upserts: ResourceRecord[];
  newEmptyStreak: number;
  /** the answer was empty after a non-empty state (log it); `applied` says whether it took effect */
  suspiciousEmpty: boolean;
  /** false when the answer was held back (unconfirmed empty): nothing changed */
  applied: boolean;
}

type Discovered = Pick<
  ResourceRecord,
  | 'name'
  | 'router'
  | 'source'
  | 'rule'
  | 'host'
  | 'hosts'
  | 'entrypoints'
  | 'tls'
  | 'priority'
  | 'upstream_service'
  | 'upstream_middlewares'
>;

function discoveredFields(router: UpstreamRouter, source: SourceKind): Discovered {
  const hosts = hostsOf(router.rule);
  return {
    name: router.name,
    router: router.key,
    source,
    rule: router.rule,
    host: hosts[0] ?? null,
    hosts,
    entrypoints: router.entrypoints,
    tls: router.tls,
    priority: router.priority,
    upstream_service: router.service,
    upstream_middlewares: router.middlewares,
  };
}

// canonical JSON compares BigInt priorities exactly and ignores key order
const tracked = (resource: ResourceRecord) =>
  stringifyCanonical(DISCOVERED_KEYS.map((field) => resource[field] ?? null));

function eligible(routers: UpstreamRouter[], options: ReconcileOptions): UpstreamRouter[] {
  const excluded = options.exclude.length > 0 ? picomatch(options.exclude, { dot: true }) : () => false;
  const seen = new Set<string>();
  return routers.filter((router) => {
    if (seen.has(router.key)) return false;
    seen.add(router.key);
    return router.provider !== 'internal' && !options.isOwnRouter?.(router.key) && !excluded(router.name);
  });
}

const disabled = (resource: ResourceRecord, now: string): ResourceRecord => ({
  ...resource,
  status: 'disabled',
  missing_since: resource.missing_since ?? now,
});

function changedOnly(existing: ResourceRecord[], next: Map<string, ResourceRecord>): ResourceRecord[] {
  return existing
    .filter((resource) => tracked(resource) !== tracked(next.get(resource.id)!))
    .map((r) => next.get(r.id)!);
}

/** Applies one sync's routers to the stored resources (API.md §4.4); override fields are never touched. */
export function reconcile(
  existing: ResourceRecord[],
  upstreamRouters: UpstreamRouter[],
  options: ReconcileOptions,
): ReconcileResult {
  const routers = eligible(upstreamRouters, options);
  if (routers.length === 0) return reconcileEmpty(existing, options);

  const byRouter = new Map(existing.map((resource) => [resource.router, resource]));
  const matched = new Map<string, UpstreamRouter>();
  const unknown: UpstreamRouter[] = [];
  for (const router of routers) {
    const resource = byRouter.get(router.key);
    if (resource && !matched.has(resource.id)) matched.set(resource.id, router);
    else unknown.push(router);
  }

  const taken = new Set([...existing.map((resource) => resource.id), ...(options.reservedIds ?? [])]);
  const created: ResourceRecord[] = [];
  for (const router of unknown) {
    // resources left without a router in this sync are the disabled ones a renumbered key may take
    const sameRule = existing.filter((resource) => !matched.has(resource.id) && resource.rule === router.rule);
    if (sameRule.length === 1) {
      matched.set(sameRule[0].id, router);
      continue;
    }
    const id = allocateId(slugify(router.name, 'resource'), router.provider, taken);
    taken.add(id);
    created.push({
      id,
      ...discoveredFields(router, options.source),
      status: 'active',
      missing_since: null,
      middlewares: [],
      external_middlewares: [],
      service_id: null,
      config: defaultResourceConfig(),
    });
  }

  const next = new Map(
    existing.map((resource) => {
      const router = matched.get(resource.id);
      const updated: ResourceRecord = router
        ? { ...resource, ...discoveredFields(router, options.source), status: 'active', missing_since: null }
        : disabled(resource, options.now);
      return [resource.id, updated];
    }),
  );
  const upserts = [...changedOnly(existing, next), ...created].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { upserts, newEmptyStreak: 0, suspiciousEmpty: false, applied: true };
}

function reconcileEmpty(existing: ResourceRecord[], options: ReconcileOptions): ReconcileResult {
  const newEmptyStreak = options.emptyStreak + 1;
  const suspiciousEmpty = options.lastWasNonEmpty || existing.some((resource) => resource.status === 'active');
  // Pangolin answers {} when it has nothing enabled, but also in a bad moment: wait for N in a row
  if (suspiciousEmpty && newEmptyStreak < options.emptyConfirmations) {
    return { upserts: [], newEmptyStreak, suspiciousEmpty, applied: false };
  }
  const next = new Map(existing.map((resource) => [resource.id, disabled(resource, options.now)]));
  return {
    upserts: changedOnly(existing, next).sort((a, b) => (a.id < b.id ? -1 : 1)),
    newEmptyStreak,
    suspiciousEmpty,
    applied: true,
  };
}
