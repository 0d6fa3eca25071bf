/** Validates `plugins.config.<name>` against the manifest's `config_schema` with Ajv (API.md §6). */
import { Ajv, type ErrorObject } from 'ajv';

export type ConfigOutcome = { ok: true; config: Record<string, unknown> } | { ok: false; message: string };

/** A validator for one loader run; Ajv caches compiled schemas, so it is not shared across app instances. */
export function createConfigValidator(): (
  name: string,
  schema: Record<string, unknown> | undefined,
  section: unknown,
) => ConfigOutcome {
  // useDefaults: a plugin sees the defaults its schema declares; strict off: authors' schemas may carry annotations Ajv does not know.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
  return (name, schema, section) => {
    const config = structuredClone(section ?? {}) as Record<string, unknown>;
    if (!schema)
      return typeof config === 'object' && !Array.isArray(config)
        ? { ok: true, config }
        : { ok: false, message: `plugins.config.${name} must be a mapping` };
    let validate;
    try {
      validate = ajv.compile(schema);
    } catch (err) {
      return { ok: false, message: `config_schema is not a valid JSON Schema: ${(err as Error).message}` };
    }
    if (validate(config)) return { ok: true, config };
    return { ok: false, message: `plugins.config.${name} is invalid: ${describe(validate.errors ?? [])}` };
  };
}

/** Ajv errors as one line: `/greeting must be string; must have required property 'name'`. */
function describe(errors: ErrorObject[]): string {
  return errors.map((e) => `${e.instancePath ? `${e.instancePath} ` : ''}${e.message ?? 'is invalid'}`).join('; ');
}
