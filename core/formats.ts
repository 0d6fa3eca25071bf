/**
 * String formats shared by request validation (Ajv) and data-file validation (TypeBox), so a value
 * means the same in a body and in a hand-edited file (API.md §2.1, §2.9).
 */
import { FormatRegistry } from '@sinclair/typebox';
import type { Ajv } from 'ajv';

/** Largest Go `time.Duration`: 2^63−1 ns. */
export const MAX_GO_DURATION_NS = 9_223_372_036_854_775_807n;
/** Whole seconds a Go `time.Duration` holds (integer-seconds fields in Traefik objects). */
export const MAX_GO_DURATION_S = 9_223_372_036;

const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const SYNTAX = /^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$/;
const PART = /([0-9]+)(?:\.([0-9]+))?(ns|us|µs|ms|s|m|h)/g;

/** Nanoseconds of a Go duration string (`300s`, `1m30s`, `1.5h`), or null when it is not one. */
export function goDurationNs(text: string): bigint | null {
  if (text.length > 100 || !SYNTAX.test(text)) return null;
  if (text === '0') return 0n;
  let total = 0n;
  for (const [, whole, fraction = '', unit] of text.matchAll(PART)) {
    const scale = UNIT_NS[unit];
    // fractions below a nanosecond are cut, as Go does
    const digits = fraction.slice(0, 20);
    total += BigInt(whole) * scale + (BigInt(digits || '0') * scale) / 10n ** BigInt(digits.length);
  }
  return total;
}

/** A Go duration string that fits `time.Duration` (Go's ParseDuration refuses larger ones). */
export function isGoDuration(text: string): boolean {
  const ns = goDurationNs(text);
  return ns !== null && ns <= MAX_GO_DURATION_NS;
}

export const FORMATS = { 'go-duration': isGoDuration } as const;

for (const [name, check] of Object.entries(FORMATS)) FormatRegistry.Set(name, check);

/** Adds the formats to an Ajv instance. */
export function addFormats(ajv: Ajv): Ajv {
  for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate });
  return ajv;
}
