/** Resources as the API shows them: the record plus computed fields and store metadata (API.md §4.4). */
import type { Priority, ResourceRecord } from '../../model/upstream-routers.ts';
import type { ResourceOutcome } from '../../model/generate/generate.ts';
import type { ResourceConfig } from '../../model/types.ts';
import type { StoredObject } from '../../core/store/types.ts';
import type { ResourceFileData } from './schemas.ts';
import type { ResourceLive } from '../../model/live/types.ts';

/** The Resource object of API.md §4.4 (priority may be a BigInt; the routes serialise it exactly). */
export interface ResourceView extends Omit<ResourceRecord, 'priority' | 'config'> {
  priority: Priority;
  config: ResourceConfig;
  path_prefix: string | null;
  effective_middlewares: string[];
  effective_service: string;
  emitted: boolean;
  warnings: string[];
  /** what the Traefik instances run (API.md §4.19) */
  live: ResourceLive;
  created_at: string;
  updated_at: string;
  etag: string;
}

/** Builds the view; `etag` is what the repository answers (it covers `record`), `outcome` comes from effective.ts. */
export function viewOf(
  record: ResourceRecord,
  stored: StoredObject<ResourceFileData>,
  etag: string,
  outcome: ResourceOutcome | undefined,
  live: ResourceLive,
): ResourceView {
  return {
    ...record,
    path_prefix: record.path_prefix ?? null,
    effective_middlewares: outcome?.effective_middlewares ?? [],
    effective_service: outcome?.effective_service ?? record.upstream_service,
    emitted: outcome?.emitted ?? false,
    warnings: outcome?.warnings ?? [],
    live,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    etag,
  };
}

/** A JSON-safe deep copy (BigInt → digit string), for third-party plugins' read-only views (API.md §6). */
export function jsonSafe<T>(value: T): T {
  if (typeof value === 'bigint') return value.toString() as T;
  if (Array.isArray(value)) return value.map(jsonSafe) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)])) as T;
  return value;
}

/** List filters of GET /api/resources: status, source and `q` (case-insensitive id, name or host). */
export function matchesFilter(
  record: ResourceRecord,
  filter: { status?: string; source?: string; q?: string },
): boolean {
  if (filter.status && filter.status !== 'all' && record.status !== filter.status) return false;
  if (filter.source && record.source !== filter.source) return false;
  if (!filter.q) return true;
  const q = filter.q.toLowerCase();
  return (
    record.id.includes(q) ||
    record.name.toLowerCase().includes(q) ||
    record.hosts.some((h) => h.toLowerCase().includes(q))
  );
}
