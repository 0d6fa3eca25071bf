/** Go `time.Duration` strings as CrowdSec sends them (`59m59.49s`, `-3s`, `1h0m0s`). */

const UNIT_MS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ns: 1e-6,
};
const PART = /([0-9]*\.?[0-9]+)(h|ms|m|s|us|µs|μs|ns)/g;

/** Milliseconds of a Go duration, or null when the text is not one. */
export function goDurationMs(text: string): number | null {
  const match = /^([-+]?)((?:[0-9]*\.?[0-9]+(?:h|ms|m|s|us|µs|μs|ns))+|0)$/.exec(text.trim());
  if (!match) return null;
  let total = 0;
  for (const [, amount, unit] of match[2].matchAll(PART)) total += Number(amount) * UNIT_MS[unit];
  return match[1] === '-' ? -total : total;
}
