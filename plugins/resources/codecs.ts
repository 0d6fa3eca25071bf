/**
 * Validation and serialisation of the resources routes.
 *
 * Bodies are validated without type coercion: the app-wide Ajv coerces, and with `anyOf` it turns
 * `null` into `""` for `string | null` fields and `0` into `null` for `integer | null` ones, which
 * would change what "null = inherit" means here. JSON-text values of the old client are converted
 * explicitly by aliases.ts instead. Query strings and path parameters keep the usual coercion.
 *
 * Responses are serialised with stringifyCanonical instead of the schema-compiled serializer:
 * router priorities can be BigInt (Traefik's MaxInt64), which fast-json-stringify rejects in a
 * nullable schema, and they must leave digit for digit (API.md §2.1). The response schemas still
 * document the shapes (OpenAPI); the views are built field by field, so nothing leaks.
 */
import type { FastifyInstance } from 'fastify';
import { stringifyCanonical } from '../datasource/lossless-json.ts';
import { installStrictBodies } from '../shared-schemas.ts';

/** Installs both compilers on an encapsulated scope (they never reach other groups). */
export function installCodecs(scope: FastifyInstance): void {
  installStrictBodies(scope);
  scope.setSerializerCompiler(() => (data) => stringifyCanonical(data));
}
