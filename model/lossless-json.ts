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
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
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

/** Sets a key as data, also `__proto__` (a parsed key like any other; plain assignment would change the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * The value with every object's keys in code-unit order. Objects and arrays that already are in
 * order (and hold no BigInt) are returned as they are, so a mostly sorted tree costs a walk, not
 * a copy. Undefined members are left for JSON.stringify to drop (or to write as null in arrays).
 */
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
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const sorted = sortDeep(item, state);
      if (sorted !== item && copy === null) copy = value.slice(0, i);
      if (copy !== null) copy.push(sorted);
    }
    return copy ?? value;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    if (INDEX_KEY.test(keys[i])) throw new NeedsSlowPath();
    if (i > 0 && keys[i - 1] > keys[i]) inOrder = false;
  }
  if (!inOrder) keys.sort();
  let out: Record<string, unknown> | null = inOrder ? null : {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const item = obj[key];
    const sorted = sortDeep(item, state);
    if (out === null && sorted !== item) {
      out = {};
      for (let j = 0; j < i; j++) setOwn(out, keys[j], obj[keys[j]]);
    }
    if (out !== null) setOwn(out, key, sorted);
  }
  return out ?? obj;
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
