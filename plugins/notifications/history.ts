/** The `since` filter of GET /api/notifications/history (API.md §2.9): an ISO-8601 instant or `<n>s|m|h|d` before now. */
import { validationError } from '../../core/errors/app-error.ts';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The instant `since` names, in ms since the epoch; 422 when it names none. */
export function historySince(since: string, nowMs: number): number {
  const relative = /^([0-9]{1,9})(s|m|h|d)$/.exec(since);
  if (relative) return nowMs - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  const at = Date.parse(since);
  if (Number.isNaN(at))
    throw validationError([
      {
        path: '/query/since',
        message: `must be an ISO-8601 timestamp or a duration such as 15m, got "${since.slice(0, 40)}"`,
      },
    ]);
  return at;
}
