/** Time rules of a channel (API.md §4.21): severity order, quiet hours, digest periods, retry delays. */
import type { ChannelData, Severity } from './schemas.ts';

const RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

/** Waits before the 2nd … 6th attempt: 1 s, 5 s, 30 s, 2 min, 10 min; the 6th failure is final. */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000] as const;

export const atLeast = (severity: Severity, minimum: Severity): boolean => RANK[severity] >= RANK[minimum];

/** The highest of some severities (info for none). */
export function highest(severities: Iterable<Severity>): Severity {
  let top: Severity = 'info';
  for (const severity of severities) if (RANK[severity] > RANK[top]) top = severity;
  return top;
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Seconds since local midnight in `zone` (invalid zones were refused on write; UTC then). */
function secondOfDay(nowMs: number, zone: string): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(nowMs));
  } catch {
    return secondOfDay(nowMs, 'UTC');
  }
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  return get('hour') * 3600 + get('minute') * 60 + get('second');
}

/**
 * When the channel's quiet hours end, if `nowMs` is inside them; null otherwise. Start = end means
 * no quiet hours; start > end spans midnight (22:00–07:00).
 */
export function quietUntil(channel: Pick<ChannelData, 'quiet_hours'>, nowMs: number): number | null {
  const quiet = channel.quiet_hours;
  if (!quiet || quiet.start === quiet.end) return null;
  const now = secondOfDay(nowMs, quiet.timezone ?? 'UTC');
  const start = minutesOf(quiet.start) * 60;
  const end = minutesOf(quiet.end) * 60;
  const inside = start < end ? now >= start && now < end : now >= start || now < end;
  if (!inside) return null;
  const wait = (end - now + 86_400) % 86_400;
  return nowMs + wait * 1000 - (nowMs % 1000);
}

/** How far the wall clock of `zone` is ahead of UTC at `atMs` (ms; UTC when the zone is unknown). */
function zoneOffsetMs(zone: string, atMs: number): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(atMs));
  } catch {
    return 0;
  }
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - (atMs - (((atMs % 1000) + 1000) % 1000));
}

/** The local calendar day of `atMs` in `zone`, as a number that grows by one a day. */
const localDay = (zone: string, atMs: number) => Math.floor((atMs + zoneOffsetMs(zone, atMs)) / 86_400_000);

/**
 * End of the digest period `nowMs` is in, by the wall clock of `zone` (the channel's
 * quiet_hours.timezone, default UTC): the next full hour, or the next local midnight. Across a
 * daylight-saving change the day is 23 or 25 hours long; where midnight itself is skipped, the day
 * ends at the first instant of the next one.
 */
export function periodEnd(schedule: 'hourly' | 'daily', nowMs: number, zone = 'UTC'): number {
  const offset = zoneOffsetMs(zone, nowMs);
  if (schedule === 'hourly') return Math.floor((nowMs + offset) / 3_600_000) * 3_600_000 + 3_600_000 - offset;
  // local midnight as a UTC wall time, turned into an instant with the offset in force just before
  // and just after it; the earliest candidate that is already in the next local day is the end
  const midnight = (Math.floor((nowMs + offset) / 86_400_000) + 1) * 86_400_000;
  const today = localDay(zone, nowMs);
  const candidates = [midnight - 14 * 3_600_000, midnight + 14 * 3_600_000]
    .map((probe) => midnight - zoneOffsetMs(zone, probe))
    .filter((instant) => instant > nowMs && localDay(zone, instant) > today)
    .sort((a, b) => a - b);
  return candidates[0] ?? midnight - offset;
}
