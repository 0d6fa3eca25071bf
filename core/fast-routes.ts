/**
 * Exact-path GET routes answered before Fastify (issue 11). Traefik instances poll the provider
 * endpoint every few seconds each, and a route that only copies prepared bytes spent most of its CPU
 * in Fastify's per-request machinery (request and reply objects, hooks, child logger, request id,
 * response time). A fast route answers only the common case whose whole behaviour it knows, and
 * declines everything else, which Fastify then serves with every hook as before.
 *
 * What core's hooks would do is checked here, once per request, before the route is asked:
 * - CORS (core/cors.ts): while CORS is on every request goes to Fastify (@fastify/cors adds its
 *   headers to requests without `Origin` too);
 * - versioning (core/versioning.ts): `Accept: …; version=N` with an unsupported N goes to Fastify (406);
 * - auth (core/auth): a `provider` route needing provider.token is served only when the request
 *   carries exactly that token; any other credentials (API tokens, wrong or malformed ones) go to
 *   Fastify, which answers them (and counts failures) as always;
 * - the request log (core/request-log.ts): provider polls log at debug (API.md §2.11), so while debug is
 *   enabled every request goes to Fastify, which writes that line;
 * - the common headers (API-Version, X-Request-Id): the route gets the request id and must send them.
 * Writes are never fast (GET only), so the audit log has nothing to miss.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from './config/schema.ts';
import { requestedVersion, requestIdFor, SUPPORTED_VERSIONS } from './versioning.ts';

/** Answers the request and returns true, or returns false (nothing written) to let Fastify serve it. */
export type FastRoute = (req: IncomingMessage, res: ServerResponse, requestId: string) => boolean;

/** Only these classes can be fast: their checks are the ones above. */
export type FastAccess = 'public' | 'provider';

const BEARER = /^Bearer +(\S+)$/i;
const isTrusting = (trust: AppConfig['server']['trust_proxy']) =>
  trust === true || (typeof trust === 'number' && trust > 0) || (Array.isArray(trust) && trust.length > 0);
const sha256 = (value: string) => createHash('sha256').update(value).digest();

export class FastRoutes {
  private readonly routes = new Map<string, { route: FastRoute; access: FastAccess }>();
  /** CORS on or a trusted proxy configured: every request goes to Fastify. */
  private readonly corsOn: boolean;
  /** sha256 of provider.token, or null when provider reads are open. */
  private readonly providerDigest: Buffer | null;

  constructor(
    config: AppConfig,
    private readonly log: FastifyBaseLogger,
  ) {
    // behind a trusted proxy the client address comes from X-Forwarded-For (Fastify's request.ip),
    // which the poller log records: such requests go to Fastify
    this.corsOn = config.cors.origins.length > 0 || isTrusting(config.server.trust_proxy);
    this.providerDigest = config.provider.token === '' ? null : sha256(config.provider.token);
  }

  /** Registers `route` for GET `path` exactly (a query string, HEAD or a trailing slash go to Fastify). */
  add(path: string, access: FastAccess, route: FastRoute): void {
    if (this.routes.has(path)) throw new Error(`fast route ${path} registered twice`);
    this.routes.set(path, { route, access });
  }

  /** True when a fast route answered the request. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' || this.corsOn) return false;
    const entry = this.routes.get(req.url as string);
    if (entry === undefined) return false;
    const headers = req.headers;
    const accept = headers.accept;
    if (accept !== undefined && accept.includes(';')) {
      const version = requestedVersion(accept);
      if (version !== undefined && !SUPPORTED_VERSIONS.has(version)) return false;
    }
    if (entry.access === 'provider' && this.providerDigest !== null && !this.isProviderToken(headers.authorization))
      return false;
    if (this.logsDebug()) return false;
    return entry.route(req, res, requestIdFor(headers['x-request-id']));
  }

  /** log.level is one of config's names (trace … silent); read per request, a level may be changed at runtime. */
  private logsDebug(): boolean {
    const level = this.log.level;
    return level === 'debug' || level === 'trace';
  }

  private isProviderToken(authorization: string | undefined): boolean {
    if (authorization === undefined) return false;
    const match = BEARER.exec(authorization);
    return match !== null && timingSafeEqual(sha256(match[1]), this.providerDigest!);
  }
}
