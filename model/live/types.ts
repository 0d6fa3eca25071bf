/**
 * Live status and diagnosis (API.md §4.19): what each Traefik instance really runs, compared with
 * the documents we served. Shared types of the pure comparison (model/live/compare.ts), the findings
 * (model/live/findings.ts) and the checker that reads Traefik (plugins/proxy-config/live/).
 */

/** A resource's state in one Traefik instance (§4.19). */
export type LiveState = 'live' | 'outdated' | 'disabled' | 'warning' | 'missing' | 'unknown';

/** Worst first: a resource's overall `state` is the worst of its instances' states. */
export const LIVE_STATES_WORST_FIRST: readonly LiveState[] = [
  'disabled',
  'missing',
  'outdated',
  'warning',
  'live',
  'unknown',
];

/** One instance's view of one resource. */
export interface InstanceLive {
  /** the data source name (§4.5) of the Traefik instance */
  source: string;
  state: LiveState;
  /** Traefik's `error` texts of the router, verbatim (or why the state is what it is, e.g. unreachable) */
  errors: string[];
  traefik_version: string | null;
}

/** Resource `live` (§4.4). `checked_at` is null before the first check. */
export interface ResourceLive {
  state: LiveState;
  checked_at: string | null;
  instances: InstanceLive[];
}

export type FindingKind =
  | 'traefik_unreachable'
  | 'document_behind'
  | 'plugins_disabled'
  | 'router_disabled'
  | 'middleware_error'
  | 'service_no_servers'
  | 'entrypoint_missing'
  | 'priority_tie'
  | 'keys_dropped'
  | 'version_unknown'
  | 'history_push_failed';

/** A §4.19 finding; `id` is stable while the finding persists (same kind, instance and subject). */
export interface Finding {
  id: string;
  severity: 'error' | 'warning' | 'info';
  kind: FindingKind;
  message: string;
  /** resource ids concerned */
  resources: string[];
  /** middleware names concerned, as Traefik names them (`<name>@<provider>`) */
  middlewares: string[];
  fix: string;
}

/**
 * Findings another group contributes to the diagnosis (e.g. the config history's push failures):
 * `findings()` is read on every diagnosis; the contributor calls `changed()` when its findings may
 * have changed, so `diagnosis` events (raised/cleared) go out at once. `remove()` withdraws it.
 */
export interface FindingContribution {
  changed(): void;
  remove(): void;
}

/** The registry on `app.liveStatus` through which groups registered before it contribute findings. */
export interface FindingRegistry {
  /** `name` identifies the contributor (one contribution per name; a second replaces the first). */
  contribute(name: string, findings: () => Finding[]): FindingContribution;
}

/** A Traefik API object as read (lossless JSON: integers above 2^53−1 may be BigInt). */
export type TraefikObject = Record<string, unknown>;

/** Everything one check read from one Traefik instance (all pages of every list). */
export interface InstanceReading {
  source: string;
  /** false when a list failed; `error` says why (the first failure) */
  reachable: boolean;
  error: string | null;
  /** `/api/version` `Version` (null when unknown) and `startDate` */
  version: string | null;
  start_date: string | null;
  /**
   * why `/api/version` did not read while the lists did (e.g. a router to api@internal that lets
   * only the lists through: 404); the instance stays reachable, its version unknown
   */
  version_error?: string | null;
  /** names of `/api/entrypoints` */
  entrypoints: string[];
  http: { routers: TraefikObject[]; services: TraefikObject[]; middlewares: TraefikObject[] };
  tcp: { routers: TraefikObject[]; services: TraefikObject[]; middlewares: TraefikObject[] };
  udp: { routers: TraefikObject[]; services: TraefikObject[] };
  /** epoch ms of the check */
  read_at: number;
}

/** Instance summary of `GET /api/proxy-config/diagnosis`. */
export interface InstanceDiagnosis {
  source: string;
  reachable: boolean;
  version: string | null;
  /** current: runs one of our documents of the last `live.settle_s`×3 s; behind: none; unknown: not read */
  document: 'current' | 'behind' | 'unknown';
  /** when `document` last changed (ISO), null before the first check */
  since: string | null;
}

export interface Diagnosis {
  checked_at: string | null;
  instances: InstanceDiagnosis[];
  findings: Finding[];
}
