/**
 * Live status and diagnosis (API.md §4.19): what each Traefik instance really runs. Screens take the
 * shapes and calls from here, so the live parts of the UI have one place that talks to these routes.
 */
import { api, unwrap } from './client';
import type { Reply, Resource } from './types';

/** Resource `live` (§4.4): the worst instance state, when it was checked, and each instance. */
export type ResourceLive = Resource['live'];
export type InstanceLive = ResourceLive['instances'][number];
export type LiveState = ResourceLive['state'];
export type Diagnosis = Reply<'/api/proxy-config/diagnosis', 'get'>;
export type Finding = Diagnosis['findings'][number];
export type InstanceDiagnosis = Diagnosis['instances'][number];

/** A resource's state in Traefik, worst first (the order of the list filter). */
export const LIVE_STATES: readonly LiveState[] = ['disabled', 'missing', 'outdated', 'warning', 'live', 'unknown'];

/** GET /api/proxy-config/diagnosis. */
export function loadDiagnosis(): Promise<Diagnosis> {
  return unwrap(api.GET('/api/proxy-config/diagnosis'));
}

/** Badge tone of a live state: live is fine, a router Traefik refuses or lacks answers 404. */
export function liveTone(state: string | null | undefined): 'ok' | 'warn' | 'bad' | 'neutral' {
  switch (state) {
    case 'live':
    case 'current':
      return 'ok';
    case 'outdated':
    case 'warning':
      return 'warn';
    case 'disabled':
    case 'missing':
    case 'behind':
      return 'bad';
    default:
      return 'neutral';
  }
}

/** What a live state means, for tooltips and the detail tab. */
export const LIVE_MEANING: Record<LiveState, string> = {
  live: 'Traefik runs this router as we serve it',
  outdated: 'Traefik runs an older version of this router than the one we serve',
  disabled: 'Traefik refused this router: it answers 404',
  warning: 'Traefik runs this router with a warning',
  missing: 'we serve this router, Traefik does not have it: it answers 404',
  unknown: 'not checked: no Traefik instance reachable, or not in the served document',
};
