/** `since` / `until` query values (API.md §2.9): an ISO-8601 timestamp or a duration before now. */
import { durationMs } from '../../model/duration.ts';
import { logErrors } from './errors.ts';
import type { TimeWindow } from './time-window.ts';

export type { TimeWindow } from './time-window.ts';

/** A date, optionally with a time and zone; Date.parse alone would accept free text such as "May 5". */
const ISO = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:?\d\d)?)?$/;

/** Milliseconds since the epoch of one `since`/`until` value, or a 422 naming the parameter. */
export function parseInstant(name: string, value: string, now: Date): number {
  const relative = durationMs(value);
  if (relative !== null) return now.getTime() - relative;
  const ms = ISO.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw logErrors.badQuery(name, 'must be an ISO-8601 timestamp or a duration like 15m, 2h, 7d');
  return ms;
}

/** Both bounds of a query; `since` after `until` is a 422. */
export function parseWindow(query: { since?: string; until?: string }, now: Date): TimeWindow {
  const since = query.since === undefined ? null : parseInstant('since', query.since, now);
  const until = query.until === undefined ? null : parseInstant('until', query.until, now);
  if (since !== null && until !== null && since > until)
    throw logErrors.badQuery('since', 'must not be later than until');
  return { since, until };
}
