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

/** Compact JSON with object keys sorted recursively in code-unit order; BigInt written as digits. */
export function stringifyCanonical(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}
