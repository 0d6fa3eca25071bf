/**
 * Request validation (API.md §2.1): one rule for the whole app. Bodies are JSON and keep their
 * types: a value of the wrong type is a 422 naming the field, never coerced (`{"name": 5}` is not
 * the name "5", `{"dry_run": 1}` is not `true`, `["x"]` is not `"x"`). Query strings and path
 * parameters are text by nature and keep their documented string forms (decimal integers,
 * `true|false|1|0` booleans), so they are coerced to the schema's type.
 */
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { addFormats } from './formats.ts';
import type { LazyCompiles } from './lazy-compile.ts';
import { nonFiniteNumberAt } from './nesting.ts';

const COMMON: Options = {
  removeAdditional: true, // unknown top-level body fields are dropped before validation (§2.1)
  useDefaults: true,
  allErrors: true, // every failing field is reported; formatValidation() picks the useful ones
  strict: false, // TypeBox annotations (description, examples) are not Ajv keywords
  strictNumbers: true, // NaN and ±Infinity (JSON's 1e309) are not numbers
};

/**
 * Sets the validator compiler on `scope` (the root app: every route and third-party plugin inherits
 * it). Each validator is compiled on first use or when `lazy` warms it (core/lazy-compile.ts).
 */
export function installRequestValidation(scope: FastifyInstance, lazy: LazyCompiles): void {
  const bodies = addFormats(new Ajv({ ...COMMON, coerceTypes: false }));
  const text = addFormats(new Ajv({ ...COMMON, coerceTypes: 'array' }));
  scope.setValidatorCompiler(({ schema, httpPart, method, url }) => {
    const validator = lazy.defer(`${method} ${url} ${httpPart ?? ''}`.trim(), () =>
      httpPart === 'body'
        ? bodies.compile(schema as FastifySchema & object)
        : finiteOnly(text.compile(schema as FastifySchema & object)),
    );
    // Fastify reads `errors` from the function it was given after a failed check
    const check = ((data: unknown) => {
      const validate = validator();
      const ok = validate(data);
      check.errors = validate.errors;
      return ok;
    }) as ValidateFunction;
    return check;
  });
}

/**
 * Ajv's coercion turns the text "1e309" into Infinity and lets it through (strictNumbers does not
 * apply to coerced values): a query or path value that coerced to a non-finite number fails here.
 * Bodies never get there: the JSON parser refuses them first (core/app.ts).
 */
function finiteOnly(validate: ValidateFunction): ValidateFunction {
  const check = ((data: unknown) => {
    if (!validate(data)) {
      check.errors = validate.errors;
      return false;
    }
    const at = nonFiniteNumberAt(data);
    check.errors =
      at === null
        ? null
        : [
            {
              instancePath: at,
              schemaPath: '#',
              keyword: 'type',
              params: { type: 'number' },
              message: 'must be a finite number',
            },
          ];
    return at === null;
  }) as ValidateFunction;
  return check;
}
