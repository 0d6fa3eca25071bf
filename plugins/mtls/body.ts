/**
 * Request bodies of the mTLS routes. Like every body they are validated without type coercion
 * (core/validation.ts). The old client's `mtls_*` names and JSON-text values are mapped explicitly
 * instead, by the resources group's alias table for the same fields.
 */
import type { FastifyRequest } from 'fastify';
import { normalizeAliases } from '../../model/aliases.ts';

/** preValidation of PUT /api/mtls/middleware/config: aliases and JSON text → canonical fields. */
export async function normalizeMiddlewareBody(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body))
    request.body = normalizeAliases('mtlswhitelist', body as Record<string, unknown>);
}
