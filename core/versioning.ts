/** API versioning by `Accept: application/json; version=N` (API.md §2.2) and the common reply headers. */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from './errors/app-error.ts';

export const API_VERSION = '1';
export const SUPPORTED_VERSIONS = new Set([API_VERSION]);

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** X-Request-Id: the caller's value when well-formed, else a new UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && REQUEST_ID.test(value) ? value : randomUUID();
}

/** The version asked for by any media range of the Accept header, or undefined when none names one. */
export function requestedVersion(accept: string | undefined): string | undefined {
  if (!accept) return undefined;
  for (const range of accept.split(',')) {
    const match = /;\s*version\s*=\s*"?([^";,\s]*)"?/i.exec(range);
    if (match) return match[1];
  }
  return undefined;
}

/** Rejects unsupported versions with 406 and stamps API-Version, Vary and X-Request-Id on every reply. */
export function installVersioning(app: FastifyInstance): void {
  // callback style, not async: it runs on every request, the provider endpoint's included
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    reply.header('api-version', API_VERSION);
    reply.header('vary', 'Accept');
    reply.header('x-request-id', request.id);
    if (request.routeOptions.config?.versioned === false) return done();
    const version = requestedVersion(request.headers.accept);
    done(version !== undefined && !SUPPORTED_VERSIONS.has(version) ? errors.unsupportedVersion(version) : undefined);
  });
}
