/** CORS (API.md §2.11): off unless `cors.origins` lists origins; then @fastify/cors with the fixed header lists. */
import fp from 'fastify-plugin';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'];
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'If-Match',
  'If-None-Match',
  'X-Request-Id',
];
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Link',
  'X-Total-Count',
  'API-Version',
  'X-Request-Id',
  'X-Config-Stale',
  'X-Restart-Required',
  'X-Catalogue-Stale',
];
const PREFLIGHT_MAX_AGE_S = 600;

/** Registers @fastify/cors at the root when origins are configured; otherwise nothing, so OPTIONS stays 404/405. */
async function corsPlugin(app: FastifyInstance): Promise<void> {
  const origins = app.config.cors.origins;
  if (origins.length === 0) return;
  await app.register(cors, {
    // Exact string match per origin; a '*' entry makes the library answer `*` (allowed: no credentials).
    origin: origins,
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_S,
    // The preflight is answered in the onRequest hook, before authentication (browsers send it without credentials).
    hook: 'onRequest',
    // A bare OPTIONS (no Access-Control-Request-Method) gets the same 204 instead of the library's text/plain 400.
    strictPreflight: false,
  });
}

export default fp(corsPlugin, { name: 'cors', decorators: { fastify: ['config'] } });
