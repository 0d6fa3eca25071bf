/**
 * Validation and serialisation of the resources routes.
 *
 * Bodies are validated without type coercion (core/validation.ts, app-wide): `null` stays `null`
 * ("inherit"). JSON-text values of the old client are converted explicitly by aliases.ts instead.
 *
 * Responses are serialised with stringifyCanonical instead of the schema-compiled serializer:
 * router priorities can be BigInt (Traefik's MaxInt64), which fast-json-stringify rejects in a
 * nullable schema, and they must leave digit for digit (API.md §2.1). The response schemas still
 * document the shapes (OpenAPI); the views are built field by field, so nothing leaks.
 */
import type { FastifyInstance } from 'fastify';
import { stringifyCanonical } from '../../model/lossless-json.ts';

/** Installs the serializer on an encapsulated scope (it never reaches other groups). */
export function installCodecs(scope: FastifyInstance): void {
  scope.setSerializerCompiler(() => (data) => stringifyCanonical(data));
}
