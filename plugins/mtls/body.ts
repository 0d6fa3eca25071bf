/**
 * Request bodies of the mTLS routes. They are validated without type coercion (installStrictBodies,
 * shared with the resources routes): the app-wide Ajv would turn a number into a password string, or
 * `0` into `null` for a nullable integer. The old client's `mtls_*` names and JSON-text values are
 * mapped explicitly instead, by the resources group's alias table for the same fields.
 */
import type { FastifyRequest } from 'fastify';
import { normalizeAliases } from '../resources/aliases.ts';

/** preValidation of PUT /api/mtls/middleware/config: aliases and JSON text → canonical fields. */
export async function normalizeMiddlewareBody(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) request.body = normalizeAliases('mtlswhitelist', body as Record<string, unknown>);
}
