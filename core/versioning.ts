/** API versioning by `Accept: application/json; version=N` (API.md §2.2) and the common reply headers. */
import { randomFillSync } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from './errors/app-error.ts';

export const API_VERSION = '1';
export const SUPPORTED_VERSIONS = new Set([API_VERSION]);

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** X-Request-Id: the caller's value when well-formed, else a new UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && REQUEST_ID.test(value) ? value : newRequestId();
}

/** Random bytes for 256 ids at a time, drawn from the CSPRNG as crypto.randomUUID draws its own. */
const entropy = Buffer.allocUnsafe(16 * 256);
let entropyAt = entropy.length;
const uuidText = Buffer.allocUnsafe(36);
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` makes one, written as one flat string: Node's
 * builds it from 20 concatenations, ≈ 0.6 KiB of short-lived strings per request that the provider's
 * fast route (issue 11: Traefik polls it constantly) paid in young-generation collections.
 */
export function newRequestId(): string {
  if (entropyAt === entropy.length) {
    randomFillSync(entropy);
    entropyAt = 0;
  }
  const from = entropyAt;
  entropyAt += 16;
  let at = 0;
  for (let i = 0; i < 16; i++) {
    let byte = entropy[from + i];
    if (i === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // RFC 9562 variant
    uuidText[at++] = HEX_DIGITS[byte >> 4];
    uuidText[at++] = HEX_DIGITS[byte & 0x0f];
    if (i === 3 || i === 5 || i === 7 || i === 9) uuidText[at++] = 0x2d; // '-'
  }
  return uuidText.toString('latin1');
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
