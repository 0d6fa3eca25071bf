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

/** End of the digest period `nowMs` is in: the next full hour, or the next midnight (UTC). */
export function periodEnd(schedule: 'hourly' | 'daily', nowMs: number): number {
  const size = schedule === 'hourly' ? 3_600_000 : 86_400_000;
  return Math.floor(nowMs / size) * size + size;
}
