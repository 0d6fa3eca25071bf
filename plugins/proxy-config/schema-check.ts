/**
 * G13: validation of the generated config against the Traefik v3 file-provider JSON Schema.
 * Findings are warnings (usually upstream fields newer than the schema), never a reason not to serve.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';

export interface SchemaWarning {
  /** JSON pointer into the config ("" = the root) */
  path: string;
  message: string;
}

export type SchemaChecker = (config: unknown) => SchemaWarning[];

const BRANCH = /\/oneOf\/[0-9]+\//;

/** Compiles the schema at `schemaPath` once and returns a checker for generated configs. */
export function createSchemaChecker(schemaPath: string): SchemaChecker {
  // read, not import: the schema lives outside the project and its path is configuration
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as object;
  const validate = new Ajv({ allErrors: true }).compile(schema);
  return (config) => {
    if (validate(withoutBigInt(config))) return [];
    return summarise(validate.errors ?? []);
  };
}

/**
 * Ajv reports a failed `oneOf` (middlewares, services) once per branch. Keep what explains the
 * problem: the errors inside the branch that matched the type key when there are some, otherwise
 * the (identical) branch errors once; the bare "must match exactly one schema" only as a last resort.
 */
function summarise(errors: ErrorObject[]): SchemaWarning[] {
  const oneOfPaths = new Set(errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath));
  const hasDeeper = new Map<string, boolean>();
  for (const path of oneOfPaths) hasDeeper.set(path, errors.some((e) => e.instancePath.startsWith(path + '/')));
  const out = new Map<string, SchemaWarning>();
  const add = (e: ErrorObject) => {
    const message = describe(e);
    out.set(e.instancePath + '\0' + message, { path: e.instancePath, message });
  };
  for (const e of errors) {
    if (e.keyword === 'oneOf') continue;
    if (oneOfPaths.has(e.instancePath) && BRANCH.test(e.schemaPath) && hasDeeper.get(e.instancePath)) continue;
    add(e);
  }
  for (const e of errors) {
    const explained = [...out.values()].some((w) => w.path === e.instancePath || w.path.startsWith(e.instancePath + '/'));
    if (e.keyword === 'oneOf' && !explained) add(e);
  }
  return [...out.values()];
}

function describe(e: ErrorObject): string {
  const message = e.message ?? e.keyword;
  if (e.keyword === 'additionalProperties') return `${message}: "${String(e.params.additionalProperty)}"`;
  return message;
}

/** Ajv cannot type-check BigInt: copy-on-write replacement by Number (only the paths that hold one). */
function withoutBigInt(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((item, i) => {
      const next = withoutBigInt(item);
      if (next !== item) (copy ??= [...value])[i] = next;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | null = null;
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const next = withoutBigInt(obj[key]);
    if (next !== obj[key]) (copy ??= { ...obj })[key] = next;
  }
  return copy ?? value;
}
