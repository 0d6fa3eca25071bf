/** The onRequest check of API.md §2.3: route class × auth mode decides whether a token is needed, the role decides what it may do. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { errors } from '../errors/app-error.ts';
import type { AccessClass, Role } from '../types.ts';
import type { FailureLimiter } from './rate-limit.ts';
import type { TokenInfo } from './token-store.ts';
import { isObject } from '../ids.ts';

export type AuthMode = 'off' | 'ops' | 'all';
export type Principal = { name: string | null; role: Role };

export interface AuthCheckOptions {
  mode: AuthMode;
  /** provider.token; empty = provider reads are open. */
  providerToken: string;
  verify: (token: string) => TokenInfo | undefined;
  touch: (token: TokenInfo) => void;
  limiter: FailureLimiter;
}

/** What an open route runs as: no token, full rights (API.md §4.15 whoami). */
export const OPEN_PRINCIPAL: Principal = Object.freeze({ name: null, role: 'admin' });
/** A request authenticated with provider.token may only read the provider endpoint. */
const PROVIDER_PRINCIPAL: Principal = Object.freeze({ name: null, role: 'viewer' });
const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
const BEARER = /^Bearer +(\S+)$/i;

type Presented = { kind: 'none' } | { kind: 'malformed'; reason?: string } | { kind: 'token'; value: string };

/** Whether the request carries Authorization more than once (Node keeps the first and drops the rest). */
function repeatedAuthorization(rawHeaders: string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === 13 && rawHeaders[i].toLowerCase() === 'authorization' && ++seen > 1) return true;
  return false;
}

/** The route's class: declared in `config.auth`, `operations` when undeclared (third-party routes). */
export function accessClassOf(request: FastifyRequest): AccessClass {
  // Unknown paths must answer 404 (not 401), and OPTIONS only exists for CORS preflights, which browsers send without credentials.
  if (request.is404 || request.method === 'OPTIONS') return 'public';
  return request.routeOptions.config?.auth ?? 'operations';
}

/** Whether the class needs a token in this mode (the table of API.md §2.3). provider.token applies in every mode. */
export function needsToken(access: AccessClass, mode: AuthMode, providerToken: string): boolean {
  switch (access) {
    case 'public':
      return false;
    case 'provider':
      return providerToken !== '';
    case 'config':
      return mode === 'all';
    default:
      return mode !== 'off';
  }
}

/** The lowest role allowed: admin class → admin; reads → viewer; other methods → operator; `config.role` raises it. */
export function requiredRole(access: AccessClass, method: string, minimum: Role | undefined): Role {
  const base: Role = access === 'admin' ? 'admin' : method === 'GET' || method === 'HEAD' ? 'viewer' : 'operator';
  return minimum && RANK[minimum] > RANK[base] ? minimum : base;
}

/**
 * The Bearer header, or `?access_token=` on WebSocket handshakes and EventSource (`streaming`)
 * routes only: a GET carrying `Upgrade: websocket` (browsers cannot set headers there). Elsewhere the query value is ignored,
 * so tokens do not end up in URLs of ordinary requests. The header wins when both are sent.
 */
function presentedToken(request: FastifyRequest): Presented {
  const header = request.headers.authorization;
  if (header !== undefined) {
    // two credentials are ambiguous (RFC 9110 §11.6.2: one field): a proxy may read the other one
    if (repeatedAuthorization(request.raw.rawHeaders))
      return { kind: 'malformed', reason: 'malformed credentials: send one Authorization header, not several' };
    const match = BEARER.exec(header);
    return match ? { kind: 'token', value: match[1] } : { kind: 'malformed' };
  }
  const upgrade =
    request.method === 'GET' &&
    (/\bwebsocket\b/i.test(String(request.headers.upgrade ?? '')) || request.routeOptions.config?.streaming === true);
  // an onRequest hook: the query is parsed but not validated yet, so it is checked here
  const parsed: unknown = request.query;
  const query = upgrade && isObject(parsed) ? parsed.access_token : undefined;
  if (query === undefined) return { kind: 'none' };
  return typeof query === 'string' && query !== '' ? { kind: 'token', value: query } : { kind: 'malformed' };
}

/**
 * A streaming route (GET /api/events) in a mode that needs no token for it still checks a token
 * that is sent, so it can tell what the caller may see (class-O events).
 */
function identifies(request: FastifyRequest, mode: AuthMode): boolean {
  return mode !== 'off' && request.routeOptions.config?.streaming === true && presentedToken(request).kind !== 'none';
}

/** Compares secrets of any length in constant time (hashing first equalises the lengths). */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * Builds the root onRequest check; it sets `request.principal` or throws 401/403/429. Synchronous:
 * it runs on every request (the provider endpoint's included), and a promise per request is a
 * measurable share of a route that only copies bytes (issue 11).
 */
export function authenticate(options: AuthCheckOptions): (request: FastifyRequest) => void {
  const { mode, providerToken, limiter } = options;
  // A Traefik polling with a wrong or no token is refused every few seconds forever: provider polls
  // are never logged one by one at info (API.md §2.11); the proxy-config group logs the first refusal
  // of each instance and counts the rest (status polls["401"])
  const levelOf = (access: AccessClass) => (access === 'provider' ? 'debug' : 'info');
  const fail = (request: FastifyRequest, access: AccessClass, reason: string): never => {
    limiter.fail(request.ip);
    request.log[levelOf(access)]({ ip: request.ip, reason }, 'authentication failed');
    throw errors.authFailed(reason);
  };

  return (request) => {
    const access = accessClassOf(request);
    if (!needsToken(access, mode, providerToken) && !identifies(request, mode)) {
      request.principal = OPEN_PRINCIPAL;
      return;
    }
    const presented = presentedToken(request);
    // No token at all is not a guess: 401 so the client learns it needs one, but it does not count
    // (behind a proxy every client shares one IP; anonymous probes must not lock operators out)
    if (presented.kind === 'none') {
      request.log[levelOf(access)]({ ip: request.ip }, 'authentication required');
      throw errors.authFailed('authentication required: send Authorization: Bearer <token>');
    }
    if (presented.kind === 'token' && access === 'provider' && sameSecret(presented.value, providerToken)) {
      request.principal = PROVIDER_PRINCIPAL;
      return;
    }
    const token = presented.kind === 'token' ? options.verify(presented.value) : undefined;
    if (!token) {
      // a token that fails: 429 while the IP is blocked, else counted; a valid one is accepted even then
      const retryAfter = limiter.retryAfter(request.ip);
      if (retryAfter > 0) throw errors.rateLimited(retryAfter);
      return fail(
        request,
        access,
        presented.kind === 'malformed'
          ? (presented.reason ?? 'malformed credentials: expected Authorization: Bearer <token>')
          : 'invalid or expired token',
      );
    }
    options.touch(token);
    request.principal = { name: token.name, role: token.role };
    const needed = requiredRole(access, request.method, request.routeOptions.config?.role);
    if (RANK[token.role] < RANK[needed])
      throw errors.forbidden(`this operation needs the ${needed} role; token ${token.name} has ${token.role}`);
  };
}
