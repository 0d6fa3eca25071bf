/**
 * Request bodies of the mTLS routes. They are validated without type coercion (like the resources
 * routes, see resources/codecs.ts): the app-wide Ajv would turn a number into a password string, or
 * `0` into `null` for a nullable integer. The old client's `mtls_*` names and JSON-text values are
 * mapped explicitly instead, by the resources group's alias table for the same fields.
 */
import { Ajv } from 'ajv';
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import { normalizeAliases } from '../resources/aliases.ts';

/** Bodies without coercion; query strings and path parameters keep the usual coercion. */
export function installStrictBodies(scope: FastifyInstance): void {
  const common = { removeAdditional: true, useDefaults: true, allErrors: true, strict: false } as const;
  const bodies = new Ajv({ ...common, coerceTypes: false });
  const others = new Ajv({ ...common, coerceTypes: 'array' });
  scope.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : others).compile(schema as FastifySchema & object));
}

/** preValidation of PUT /api/mtls/middleware/config: aliases and JSON text → canonical fields. */
export async function normalizeMiddlewareBody(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) request.body = normalizeAliases('mtlswhitelist', body as Record<string, unknown>);
}
