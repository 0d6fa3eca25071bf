/**
 * Lossless JSON for upstream bodies: Traefik and Pangolin send integers above 2^53−1 (router
 * priorities up to MaxInt64) that JSON.parse would round. Unsafe integers become BigInt, and
 * stringifyCanonical writes them back digit for digit (API.md §2.1, G11).
 */
import { parse, isSafeNumber } from 'lossless-json';

const INTEGER = /^-?[0-9]+$/;

function parseNumber(text: string): number | bigint {
  if (INTEGER.test(text) && !isSafeNumber(text)) return BigInt(text);
  return Number(text);
}

/** JSON.parse that keeps unsafe integers exact (as BigInt). Throws SyntaxError on bad input. */
export function parseLossless(text: string): unknown {
  return parse(text, null, parseNumber);
}

function write(value: unknown, out: string[]): void {
  if (value === null || value === undefined) {
    out.push('null');
  } else if (typeof value === 'bigint') {
    out.push(value.toString());
  } else if (typeof value === 'number') {
    out.push(Number.isFinite(value) ? JSON.stringify(value) : 'null');
  } else if (typeof value === 'string' || typeof value === 'boolean') {
    out.push(JSON.stringify(value));
  } else if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(',');
      write(item === undefined ? null : item, out);
    });
    out.push(']');
  } else {
    const obj = value as Record<string, unknown>;
    // code-unit order (API.md G11): the default sort compares UTF-16 code units
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(JSON.stringify(k), ':');
      write(obj[k], out);
    });
    out.push('}');
  }
}

// Fast path: copy with sorted keys and let the native JSON.stringify write it. BigInts travel as
// sentinel strings that are swapped for their digits afterwards. V8 orders array-index-like keys
// ("42") numerically whatever the insertion order, and a real string could mimic the sentinel:
// both cases take the slow writer above, which is exact by construction.
const SENTINEL = '\u0000bigint:';
const SENTINEL_JSON = /"\\u0000bigint:(-?[0-9]+)"/g;
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,8})$/;

class NeedsSlowPath extends Error {}

function sortDeep(value: unknown, state: { big: boolean }): unknown {
  if (typeof value === 'bigint') {
    state.big = true;
    return SENTINEL + value.toString();
  }
  if (typeof value === 'string') {
    if (value.startsWith(SENTINEL)) throw new NeedsSlowPath();
    return value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortDeep(item, state)));
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (INDEX_KEY.test(key)) throw new NeedsSlowPath();
    const item = obj[key];
    if (item !== undefined) out[key] = sortDeep(item, state);
  }
  return out;
}

/** Compact JSON with object keys sorted recursively in code-unit order; BigInt written as digits. */
export function stringifyCanonical(value: unknown): string {
  const state = { big: false };
  try {
    const text = JSON.stringify(sortDeep(value, state)) ?? 'null';
    return state.big ? text.replace(SENTINEL_JSON, '$1') : text;
  } catch (err) {
    if (!(err instanceof NeedsSlowPath)) throw err;
    const out: string[] = [];
    write(value, out);
    return out.join('');
  }
}
