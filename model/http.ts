/** Route helpers of API.md §2: ETag quoting, If-Match / If-None-Match, paging headers. */
import type { Static, TSchema } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyTypeProvider,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { PagingQuery } from './schemas.ts';

/**
 * The scope a group's routes are declared on: its child scope with the TypeBox type provider
 * (`parent.withTypeProvider<TypeBoxTypeProvider>()`), so request parts are typed by the route schema.
 */
export type RouteScope = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * For the few routes that answer with prepared bytes instead of a response schema's shape (the
 * provider config): request parts typed by TypeBox as with TypeBoxTypeProvider, the reply untyped.
 */
export interface TypeBoxRequestTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
  serializer: unknown;
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

/** Whether an If-Match header value accepts the etag (`*`, weak tags and lists accepted); no header accepts anything, no object nothing else. */
export function ifMatchAccepts(ifMatch: string | undefined, etag: string | undefined): boolean {
  if (ifMatch === undefined) return true;
  if (etag === undefined) return false;
  return ifMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === `"${etag}"`;
  });
}

/** The store's version check (WriteOptions.expect) for an If-Match header value; none without a header. */
export const matchingVersion = (ifMatch: string | undefined): ((etag: string | undefined) => boolean) | undefined =>
  ifMatch === undefined ? undefined : (etag) => ifMatchAccepts(ifMatch, etag);

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
