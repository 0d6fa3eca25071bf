/**
 * Numbers inside Traefik objects (API.md §2.1): the JSON Schema says "number", but Traefik reads
 * them into Go ints, floats and time.Durations. A value those cannot hold (1e309 parses as
 * Infinity; 18446744073709551616 loses its digits) would be stored as garbage or break the store,
 * so it is refused with 422 naming the field.
 *
 * Traefik's HTTP provider decodes the whole document at once: one value it cannot decode makes it
 * refuse the document and keep the previous one, so every later change is lost. Measured with
 * Traefik 3.7.15: a fraction in a Go integer field (`rateLimit.burst: 1.5`) gives `cannot decode
 * configuration data: strconv.ParseInt: parsing "1.500000": invalid syntax`; a fraction of seconds
 * in a duration field (`period: 1.5` or `"1.5"`) gives `time: missing unit in duration "1.500000"`.
 */
import { goDurationNs, MAX_GO_DURATION_NS, MAX_GO_DURATION_S } from '../core/formats.ts';
import type { ErrorDetail } from '../core/errors/app-error.ts';
import { pointerToken } from '../core/json-pointer.ts';

/** Traefik fields read as ptypes.Duration: a Go duration string, or (as a number or digits) seconds. */
const DURATION_FIELDS = new Set([
  'checkPeriod',
  'fallbackDuration',
  'flushInterval',
  'initialInterval',
  'interval',
  'period',
  'recoveryDuration',
  'timeout',
]);

/**
 * Fields the schema types "number" (or string-or-number) that Traefik reads into Go integers, per
 * definition, as paths inside it (`*` = any array index).
 */
const INTEGER_FIELDS: Record<string, readonly string[]> = {
  rateLimitMiddleware: ['/average', '/burst'],
  forwardAuthMiddleware: ['/maxBodySize', '/maxResponseBodySize'],
  httpWeightedService: ['/services/*/weight'],
  tcpWeightedService: ['/services/*/weight'],
  udpWeightedService: ['/services/*/weight'],
  httpMirroringService: ['/mirrors/*/percent'],
  tcpLoadBalancerService: ['/terminationDelay'],
};

const WHOLE = /^-?[0-9]+$/;

/**
 * Problems with numbers anywhere in `value`, as details under `prefix`; `definition` (the Traefik
 * JSON Schema definition `value` is checked against) adds the integer and duration rules of
 * Traefik's decoder. A plugin's free-form config is left to the plugin.
 */
export function numberProblems(value: unknown, prefix: string, definition?: string): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const integers = new Set(INTEGER_FIELDS[definition ?? ''] ?? []);
  const decoded = definition !== undefined && definition !== 'pluginMiddleware';
  const walk = (node: unknown, at: string, key: string | null): void => {
    const duration = key !== null && DURATION_FIELDS.has(key);
    if (integers.size && (typeof node === 'number' || typeof node === 'string')) {
      const inside = at.slice(prefix.length).replace(/\/[0-9]+(?=\/|$)/g, '/*');
      if (integers.has(inside) && (typeof node === 'number' ? !Number.isInteger(node) : !WHOLE.test(node)))
        out.push({ path: at, message: `must be a whole number: Traefik reads it as an integer (received ${node})` });
    }
    if (decoded && duration && typeof node === 'number' && Number.isFinite(node) && !Number.isInteger(node))
      out.push({
        path: at,
        message: `must be whole seconds or a duration string such as "1.5s": Traefik cannot read ${node}`,
      });
    else if (decoded && duration && typeof node === 'string' && !WHOLE.test(node) && goDurationNs(node) === null)
      out.push({
        path: at,
        message: `must be a Go duration such as "100ms" or "1m30s", or whole seconds (received "${node.slice(0, 40)}")`,
      });
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) out.push({ path: at, message: `must be a finite number (received ${node})` });
      else if (duration && node > MAX_GO_DURATION_S)
        out.push({
          path: at,
          message: `must be at most ${MAX_GO_DURATION_S} seconds, the largest Go duration (received ${node})`,
        });
      else if (Math.abs(node) > Number.MAX_SAFE_INTEGER)
        out.push({
          path: at,
          message: `must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER} (received ${node})`,
        });
    } else if (typeof node === 'string' && duration) {
      const ns = /^[0-9]+$/.test(node) ? BigInt(node) * 1_000_000_000n : goDurationNs(node);
      if (ns !== null && ns > MAX_GO_DURATION_NS)
        out.push({
          path: at,
          message: `must be at most 2562047h47m16.854775807s, the largest Go duration (received "${node.slice(0, 40)}")`,
        });
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, `${at}/${i}`, null));
    } else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${pointerToken(k)}`, k);
    }
  };
  walk(value, prefix, null);
  return out;
}
