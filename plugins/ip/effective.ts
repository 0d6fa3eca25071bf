/**
 * `effective_within_s` (API.md §4.23): how long Traefik's CrowdSec bouncer plugin may still act on
 * its cache after a ban, an unban or an allowlist change, read from the bouncer middlewares we manage.
 */
import type { StoredObject } from '../../core/store/types.ts';
import type { MiddlewareData } from '../middlewares/schemas.ts';

/** The plugin's defaults (crowdsec-bouncer-traefik-plugin README: mode live, both intervals 60 s). */
const DEFAULT_MODE = 'live';
const DEFAULT_INTERVAL_S = 60;

/**
 * Seconds until every bouncer middleware of ours has let go of its cache: the largest over those
 * found (several may guard different routers); null when none is known. A middleware counts as a
 * bouncer when its plugin options carry one of the plugin's own keys (`crowdsecMode`,
 * `crowdsecLapiKey`, `crowdsecLapiHost`, `crowdsecLapiKeyFile`), whatever name the static config
 * gave the plugin; one with `enabled: false` blocks nobody (0). When some bouncer is in use (a
 * resource or chain refers to it, `usedBy`), only the ones in use count: an unused one, such as the
 * seeded template, guards nothing.
 */
export function effectiveWithinS(
  middlewares: StoredObject<MiddlewareData>[],
  usedBy: (id: string) => string[] = () => [],
): number | null {
  const bouncers: { seconds: number; used: boolean }[] = [];
  for (const m of middlewares) {
    if (m.data.type !== 'plugin') continue;
    for (const options of Object.values(m.data.config ?? {})) {
      const seconds = bouncerSeconds(options);
      if (seconds !== null) bouncers.push({ seconds, used: usedBy(m.id).length > 0 });
    }
  }
  const counted = bouncers.some((b) => b.used) ? bouncers.filter((b) => b.used) : bouncers;
  return counted.length === 0 ? null : Math.max(...counted.map((b) => b.seconds));
}

const BOUNCER_KEYS = ['crowdsecMode', 'crowdsecLapiKey', 'crowdsecLapiHost', 'crowdsecLapiKeyFile'];

/** One plugin's options: its cache time, or null when they are not the CrowdSec bouncer's. */
function bouncerSeconds(options: unknown): number | null {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return null;
  const o = options as Record<string, unknown>;
  if (!BOUNCER_KEYS.some((key) => key in o)) return null;
  if (o.enabled === false || o.enabled === 'false') return 0;
  const mode = typeof o.crowdsecMode === 'string' ? o.crowdsecMode : DEFAULT_MODE;
  // stream (and alone, which streams from CAPI itself) refreshes every updateIntervalSeconds
  if (mode === 'stream' || mode === 'alone') return seconds(o.updateIntervalSeconds);
  // live caches each answer, "no decision" included, for defaultDecisionSeconds
  if (mode === 'live') return seconds(o.defaultDecisionSeconds);
  // none and appsec ask for every request: nothing cached
  return 0;
}

/** An interval option as Traefik would read it (number or numeric string); the default otherwise. */
function seconds(value: unknown): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.ceil(n) : DEFAULT_INTERVAL_S;
}
