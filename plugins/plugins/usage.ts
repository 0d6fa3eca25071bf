/** Which middlewares use a plugin key (API.md §4.6 `used_by` and /usage), from the stored middlewares. */
import type { StoredObject } from '../../core/store/types.ts';
import type { MiddlewareData } from '../middlewares/schemas.ts';

/** The middleware records and their referrer paths (`/api/resources/<id>`, `/api/middlewares/<id>`). */
export interface MiddlewareSource {
  records(): StoredObject<MiddlewareData>[];
  usedBy(id: string): string[];
}

/** Plugin keys a plugin middleware config names (normally exactly one). */
const keysOf = (data: MiddlewareData): string[] =>
  data.type === 'plugin' && typeof data.config === 'object' && data.config !== null ? Object.keys(data.config) : [];

/** Middleware ids per plugin key, ids sorted. */
export function pluginUsers(source: MiddlewareSource): Map<string, string[]> {
  const users = new Map<string, string[]>();
  for (const record of source.records()) {
    for (const key of keysOf(record.data)) users.set(key, [...(users.get(key) ?? []), record.id]);
  }
  for (const ids of users.values()) ids.sort();
  return users;
}

/** The resources that use one middleware (ids from the referrer paths). */
export function resourcesUsing(source: MiddlewareSource, middlewareId: string): string[] {
  const prefix = '/api/resources/';
  return source
    .usedBy(middlewareId)
    .filter((p) => p.startsWith(prefix))
    .map((p) => p.slice(prefix.length))
    .sort();
}
