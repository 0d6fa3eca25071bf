/**
 * `data/crowdsec/allowlist.yaml` (API.md §4.23): our allowlist entries, one store document, hand
 * edits validated like every data file (a bad file leaves the last valid version in effect).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import { SLUG_PATTERN } from '../../core/ids.ts';
import { parseTarget } from './ip-range.ts';

export const ALLOWLIST_PATH = 'crowdsec/allowlist.yaml';

const Timestamp = Type.String({ minLength: 1, maxLength: 40 });

const StoredEntry = Type.Object({
  id: Type.String({ pattern: SLUG_PATTERN }),
  value: Type.String({ minLength: 1, maxLength: 100 }),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
  expires_at: Type.Optional(Type.Union([Timestamp, Type.Null()])),
  created_by: Type.Optional(Type.String({ maxLength: 100 })),
  created_at: Type.Optional(Timestamp),
  removed_decisions: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
});
export type StoredEntry = Static<typeof StoredEntry>;

export const AllowlistFileSchema = Type.Object({ entries: Type.Array(StoredEntry, { maxItems: 10_000 }) });
export type AllowlistFile = Static<typeof AllowlistFileSchema>;

/** An entry with every field filled (what the API shows). */
export type Entry = Required<StoredEntry>;

/** Hand edits: values that are targets, timestamps that parse, ids that are unique. */
export function checkAllowlistFile(file: AllowlistFile): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  file.entries.forEach((entry, index) => {
    const at = `/entries/${index}`;
    const target = parseTarget(entry.value);
    if ('error' in target) details.push({ path: `${at}/value`, message: target.error });
    if (seen.has(entry.id)) details.push({ path: `${at}/id`, message: `id ${entry.id} is used twice` });
    seen.add(entry.id);
    for (const key of ['expires_at', 'created_at'] as const) {
      const value = entry[key];
      if (typeof value === 'string' && !Number.isFinite(Date.parse(value)))
        details.push({ path: `${at}/${key}`, message: `must be an ISO-8601 timestamp (got ${JSON.stringify(value)})` });
    }
  });
  return details;
}

/** Defaults for fields a hand edit may leave out. */
export function filled(entry: StoredEntry, fallbackCreatedAt: string): Entry {
  return {
    id: entry.id,
    value: entry.value,
    reason: entry.reason ?? '',
    expires_at: entry.expires_at ? new Date(Date.parse(entry.expires_at)).toISOString() : null,
    created_by: entry.created_by ?? 'gitops',
    created_at: entry.created_at ? new Date(Date.parse(entry.created_at)).toISOString() : fallbackCreatedAt,
    removed_decisions: entry.removed_decisions ?? 0,
  };
}

/** Whether the entry is still in force at `now` (ms). */
export const isActive = (entry: StoredEntry, now: number): boolean =>
  !entry.expires_at || Date.parse(entry.expires_at) > now;
