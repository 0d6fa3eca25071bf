/** Services as the API shows them: stored (manual/template) and discovered ones (API.md §4.3). */
import { hashOf } from '../../core/store/atomic-write.ts';
import type { StoredObject } from '../../core/store/types.ts';
import { stringifyCanonical } from '../../model/lossless-json.ts';
import type { DiscoveredService } from '../../model/upstream-state.ts';
import type { ServiceData, ServiceView } from './schemas.ts';

/** View of a stored service; `usedBy` and `warnings` are computed by the caller. */
export function storedView(stored: StoredObject<ServiceData>, usedBy: string[], warnings: string[]): ServiceView {
  const { data } = stored;
  return {
    id: stored.id,
    name: data.name,
    type: data.type,
    protocol: data.protocol ?? 'http',
    config: data.config,
    description: data.description ?? '',
    status: 'active',
    source: data.source ?? 'manual',
    provider: null,
    upstream_name: null,
    used_by: usedBy,
    warnings,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    etag: stored.etag,
  };
}

/**
 * View of a discovered service. It is not stored, so its ETag hashes its canonical JSON and its
 * timestamps are those of the sync that produced it.
 */
export function discoveredView(service: DiscoveredService, usedBy: string[], syncedAt: string): ServiceView {
  return {
    id: service.id,
    name: service.name,
    type: service.type,
    protocol: service.protocol,
    config: jsonSafe(service.config) as Record<string, unknown>,
    description: '',
    status: service.status,
    source: 'discovered',
    provider: service.provider,
    upstream_name: service.upstream_name,
    used_by: usedBy,
    warnings: [],
    created_at: syncedAt,
    updated_at: syncedAt,
    etag: hashOf(stringifyCanonical(service)),
  };
}

/** Upstream bodies are parsed losslessly: integers beyond 2^53−1 arrive as BigInt, which JSON cannot serialise; they are shown as digit strings. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  return value;
}
