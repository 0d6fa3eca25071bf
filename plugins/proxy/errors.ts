/** Errors of the Proxy explorer, built on the core catalogue ids (API.md §2.4, §4.7). */
import { errors, validationError } from '../../core/errors/app-error.ts';

/** One part of a combined answer that failed: the Traefik API path and why. */
export interface PartError {
  endpoint: string;
  message: string;
}

export const proxyErrors = {
  noSource: () =>
    errors.notConfigured(
      'no data source of type traefik is defined; the proxy explorer reads the Traefik API (add one with PUT /api/datasource/:name)',
    ),
  /** One Traefik read failed; `message` comes from the upstream client (names Traefik and the URL, never a password). */
  upstream: (source: string, message: string) => errors.upstreamUnavailable(`data source ${source}: ${message}`),
  /** Every part of a combined answer (`type=all`, `/api/proxy/data`) failed. */
  allFailed: (source: string, failures: PartError[]) =>
    errors.upstreamUnavailable(
      `data source ${source}: all ${failures.length} Traefik API requests failed; first: ${failures[0].message}`,
    ),
  pagingWithAll: (field: 'page' | 'page_size') =>
    validationError([{ path: `/query/${field}`, message: 'paging is not available with type=all' }]),
};
