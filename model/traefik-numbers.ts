/**
 * Numbers inside Traefik objects (API.md §2.1): the JSON Schema says "number", but Traefik reads
 * them into Go ints, floats and time.Durations. A value those cannot hold (1e309 parses as
 * Infinity; 18446744073709551616 loses its digits) would be stored as garbage or break the store,
 * so it is refused with 422 naming the field.
 */
import { goDurationNs, MAX_GO_DURATION_NS, MAX_GO_DURATION_S } from '../core/formats.ts';
import type { ErrorDetail } from '../core/errors/app-error.ts';

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

const escape = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** Problems with numbers anywhere in `value`, as details under `prefix`. */
export function numberProblems(value: unknown, prefix: string): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const walk = (node: unknown, at: string, key: string | null): void => {
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) out.push({ path: at, message: `must be a finite number (received ${node})` });
      else if (key !== null && DURATION_FIELDS.has(key) && node > MAX_GO_DURATION_S)
        out.push({
          path: at,
          message: `must be at most ${MAX_GO_DURATION_S} seconds, the largest Go duration (received ${node})`,
        });
      else if (Math.abs(node) > Number.MAX_SAFE_INTEGER)
        out.push({
          path: at,
          message: `must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER} (received ${node})`,
        });
    } else if (typeof node === 'string' && key !== null && DURATION_FIELDS.has(key)) {
      const ns = /^[0-9]+$/.test(node) ? BigInt(node) * 1_000_000_000n : goDurationNs(node);
      if (ns !== null && ns > MAX_GO_DURATION_NS)
        out.push({
          path: at,
          message: `must be at most 2562047h47m16.854775807s, the largest Go duration (received "${node.slice(0, 40)}")`,
        });
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, `${at}/${i}`, null));
    } else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${escape(k)}`, k);
    }
  };
  walk(value, prefix, null);
  return out;
}
