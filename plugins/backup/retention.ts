/** Retention (API.md §4.10 `backup.retention`): which backups a cleanup deletes. */

export interface RetentionPolicy {
  keep_last: number;
  max_age_days: number;
}

const DAY_MS = 86_400_000;

/**
 * Ids to delete from `backups` (newest first): those outside the newest `keep_last` that are also
 * older than `max_age_days`. Both conditions must hold, so `max_age_days: 0` (age deletion off)
 * deletes nothing; an unparsable `created_at` never counts as old.
 */
export function selectExpired(
  backups: { id: string; created_at: string }[],
  policy: RetentionPolicy,
  now: Date,
): string[] {
  if (policy.max_age_days <= 0) return [];
  const cutoff = now.getTime() - policy.max_age_days * DAY_MS;
  return backups
    .slice(policy.keep_last)
    .filter((b) => Date.parse(b.created_at) < cutoff)
    .map((b) => b.id);
}
