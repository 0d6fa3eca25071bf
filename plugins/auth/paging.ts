/** Optional paging of list replies (API.md §2.6): X-Total-Count always, Link rel=next/prev when paged. */
import type { FastifyReply, FastifyRequest } from 'fastify';

const DEFAULT_PAGE_SIZE = 100;

/** Returns the requested page of `items` and sets X-Total-Count (and Link when paging was asked for). */
export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, items: T[], query: { page?: number; page_size?: number }): T[] {
  reply.header('x-total-count', String(items.length));
  if (query.page === undefined && query.page_size === undefined) return items;
  const page = query.page ?? 1;
  const size = query.page_size ?? DEFAULT_PAGE_SIZE;
  const links: string[] = [];
  const linkTo = (target: number, rel: string) => {
    const url = new URL(request.url, 'http://local');
    url.searchParams.set('page', String(target));
    url.searchParams.set('page_size', String(size));
    links.push(`<${url.pathname}${url.search}>; rel="${rel}"`);
  };
  if (page * size < items.length) linkTo(page + 1, 'next');
  if (page > 1) linkTo(Math.min(page - 1, Math.max(1, Math.ceil(items.length / size))), 'prev');
  if (links.length > 0) reply.header('link', links.join(', '));
  return items.slice((page - 1) * size, page * size);
}
