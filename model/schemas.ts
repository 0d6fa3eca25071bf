/** Schema pieces every group uses: query booleans, paging, error body, ids, ETags, references (API.md §2). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { validationError, type ErrorDetail } from '../core/errors/app-error.ts';

/** Query booleans accept `true|false|1|0` (API.md §2.1). */
export const QueryBool = Type.String({ pattern: '^(true|false|1|0)$', description: 'true, false, 1 or 0' });
export const isTrue = (value: string | undefined): boolean => value === 'true' || value === '1';

export const Slug = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'slug id (API.md §2.8)' });
export const IdParams = Type.Object({ id: Slug });

export const ErrorBody = Type.Object({
  id: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
}, { additionalProperties: true, $id: 'ErrorBody' });

export const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};
export type PagingQuery = { page?: number; page_size?: number };
export type ErrorBodyType = Static<typeof ErrorBody>;

// ---- Helpers shared by the object groups (middlewares, services, resources, mTLS clients) ----

/** Standard error responses of object routes, for the route `response` maps. */
export const ErrorResponses = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 412: ErrorBody, 415: ErrorBody, 422: ErrorBody } as const;

/** Free-form JSON object (Traefik configs): kept as sent, never stripped. */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** A `description` field (API.md §2.10: ≤ 1000 chars). */
export const Description = Type.String({ maxLength: 1000 });

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Validates a `name` (API.md §2.8: 1–100 chars after trimming, no control characters); returns it trimmed or throws 422. */
export function checkName(raw: string, pointer = '/name'): string {
  const name = raw.trim();
  const problem = name.length === 0 ? 'must not be empty' : name.length > 100 ? 'must be at most 100 characters'
    : CONTROL.test(name) ? 'must not contain control characters' : null;
  if (problem) throw validationError([{ path: pointer, message: problem }]);
  return name;
}

/**
 * Slug id derived from a name (API.md §2.8): NFKD, diacritics removed, lower-cased, runs outside
 * [a-z0-9] → `-`, trimmed, cut to 63; empty → `fallback`; taken → `-2`, `-3`, … within 63 chars.
 */
export function slugify(name: string, fallback: string, taken: (id: string) => boolean): string {
  const base = name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 63) || fallback;
  if (!taken(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, 63 - suffix.length) + suffix;
    if (!taken(candidate)) return candidate;
  }
}

/** `ETag` header value of an object etag. */
export const quoteEtag = (etag: string): string => `"${etag}"`;

/** Whether an If-None-Match header matches the etag (`*`, weak tags and lists accepted). */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return false;
  return value.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === `"${etag}"`;
  });
}

/** The single-header value of If-Match (arrays joined as the RFC allows). */
export function ifMatchOf(request: FastifyRequest): string | undefined {
  const value = request.headers['if-match'];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * Applies API.md §2.6 to a filtered, sorted list: sets X-Total-Count and, when paged, an RFC 8288
 * Link header (absolute paths keeping the other query parameters); returns the requested page.
 */
export function paginate<T>(request: FastifyRequest, reply: FastifyReply, items: T[], query: PagingQuery): T[] {
  reply.header('x-total-count', String(items.length));
  if (query.page === undefined && query.page_size === undefined) return items;
  const page = query.page ?? 1;
  const size = query.page_size ?? 100;
  const [pathname, search = ''] = request.url.split('?');
  const link = (target: number, rel: string) => {
    const params = new URLSearchParams(search);
    params.set('page', String(target));
    params.set('page_size', String(size));
    return `<${pathname}?${params.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page * size < items.length) links.push(link(page + 1, 'next'));
  if (page > 1) links.push(link(Math.min(page - 1, Math.max(1, Math.ceil(items.length / size))), 'prev'));
  if (links.length > 0) reply.header('link', links.join(', '));
  return items.slice((page - 1) * size, page * size);
}

/**
 * Something outside a group that references its objects (resources assign middlewares and
 * services). The owning group asks every registered source before a DELETE and for `used_by`.
 */
export interface ReferenceSource {
  /** API paths of the objects that reference `id`, e.g. `[{path: '/api/resources/app'}]`. */
  referrers(id: string): { path: string }[];
  /** Removes every reference to `id` (DELETE with `force=true`); sources without it block a forced delete. */
  removeReferences?(id: string): Promise<void>;
}

/** Keeps registered reference sources; `add` returns the unregister function. */
export class ReferenceRegistry {
  private readonly sources = new Set<ReferenceSource>();

  add(source: ReferenceSource): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }

  /** Referrer paths from all sources, deduplicated and sorted. */
  referrers(id: string): string[] {
    const paths = new Set<string>();
    for (const source of this.sources) for (const r of source.referrers(id)) paths.add(r.path);
    return [...paths].sort();
  }

  /** Asks each source that holds references to `id` and can drop them to do so. */
  async removeAll(id: string): Promise<void> {
    for (const source of this.sources) {
      if (source.referrers(id).length > 0 && source.removeReferences) await source.removeReferences(id);
    }
  }
}

/** `in_use` details from referrer paths. */
export const referrerDetails = (paths: string[], what: string): ErrorDetail[] => paths.map((path) => ({ path, message: `references this ${what}` }));

const DURATION = /^([0-9]+)(s|m|h|d)$/;
const DURATION_UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a short duration `<n>s|m|h|d` (`15m`, `24h`, `7d`), or null for anything else. */
export function durationMs(text: string): number | null {
  const match = DURATION.exec(text);
  return match ? Number(match[1]) * DURATION_UNIT_MS[match[2]] : null;
}
