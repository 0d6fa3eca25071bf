/**
 * Request validation (API.md §2.1): one rule for the whole app. Bodies are JSON and keep their
 * types: a value of the wrong type is a 422 naming the field, never coerced (`{"name": 5}` is not
 * the name "5", `{"dry_run": 1}` is not `true`, `["x"]` is not `"x"`). Query strings and path
 * parameters are text by nature and keep their documented string forms (decimal integers,
 * `true|false|1|0` booleans), so they are coerced to the schema's type.
 */
import { Ajv, type Options } from 'ajv';
import type { FastifyInstance, FastifySchema } from 'fastify';

const COMMON: Options = {
  removeAdditional: true, // unknown top-level body fields are dropped before validation (§2.1)
  useDefaults: true,
  allErrors: true, // every failing field is reported; formatValidation() picks the useful ones
  strict: false, // TypeBox annotations (description, examples) are not Ajv keywords
};

/** Sets the validator compiler on `scope` (the root app: every route and third-party plugin inherits it). */
export function installRequestValidation(scope: FastifyInstance): void {
  const bodies = new Ajv({ ...COMMON, coerceTypes: false });
  const text = new Ajv({ ...COMMON, coerceTypes: 'array' });
  scope.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : text).compile(schema as FastifySchema & object));
}
