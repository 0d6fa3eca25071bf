/** Short durations of the settings (`15m`, `24h`, `7d`); Go durations of Traefik objects are core/formats.ts. */

const DURATION = /^([0-9]+)(s|m|h|d)$/;
const DURATION_UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a short duration `<n>s|m|h|d` (`15m`, `24h`, `7d`), or null for anything else. */
export function durationMs(text: string): number | null {
  const match = DURATION.exec(text);
  return match ? Number(match[1]) * DURATION_UNIT_MS[match[2]] : null;
}
