/**
 * G13: validation of the generated config against the Traefik v3 file-provider JSON Schema.
 * Findings are warnings (usually upstream fields newer than the schema), never a reason not to serve.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { isObject } from '../../core/ids.ts';

export interface SchemaWarning {
  /** JSON pointer into the config ("" = the root) */
  path: string;
  message: string;
}

export type SchemaChecker = (config: unknown) => SchemaWarning[];

export interface SchemaCheckerOptions {
  /**
   * Remember the errors of each router, service and middleware object by identity, and check only
   * objects not seen before. Only for configs whose objects never change once checked (the
   * provider's generations): at 10,000 routers a full check costs ~80 ms, an incremental one a few.
   */
  memo?: boolean;
}

const BRANCH = /\/oneOf\/[0-9]+\//;
/** Keywords a map schema (`http.routers` …) may have for its entries to be checked one by one. */
const MAP_KEYWORDS = new Set(['type', 'description', 'additionalProperties']);

interface EntryMap {
  section: string;
  kind: string;
  validate: ValidateFunction;
}

/**
 * A checker for generated configs against the schema at `schemaPath`. The schema is read and
 * compiled on the first check, which runs after the first generation is served: compiling it
 * while the app was built took about a quarter of a second of every start (issue 11). A schema
 * that cannot be read or compiled gives one warning saying so, on every check.
 */
export function createSchemaChecker(schemaPath: string, options: SchemaCheckerOptions = {}): SchemaChecker {
  let check: SchemaChecker | null = null;
  return (config) => {
    if (!check) {
      try {
        check = compileSchemaChecker(schemaPath, options);
      } catch (err) {
        const message = `the Traefik JSON schema ${schemaPath} could not be compiled: ${(err as Error).message}`;
        check = () => [{ path: '', message }];
      }
    }
    return check(config);
  };
}

function compileSchemaChecker(schemaPath: string, options: SchemaCheckerOptions): SchemaChecker {
  // read, not import: the schema lives outside the project and its path is configuration
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as JsonSchema;
  const ajv = new Ajv({ allErrors: true });
  const validate = ajv.compile(schema);
  if (!options.memo) {
    return (config) => (validate(withoutBigInt(config)) ? [] : summarise(validate.errors ?? []));
  }
  const maps = entryMaps(ajv, schema);
  const known = new WeakMap<object, ErrorObject[]>();
  return (config) => {
    // the skeleton (maps emptied) against the whole schema, then each map entry against its definition
    const errors = validate(withoutBigInt(skeleton(config, maps))) ? [] : [...(validate.errors ?? [])];
    for (const map of maps) {
      const entries = entriesOf(config, map);
      if (!entries) continue;
      for (const key of Object.keys(entries)) {
        const entry = entries[key];
        let found = typeof entry === 'object' && entry !== null ? known.get(entry) : undefined;
        if (!found) {
          found = map.validate(withoutBigInt(entry)) ? [] : [...(map.validate.errors ?? [])];
          if (typeof entry === 'object' && entry !== null) known.set(entry, found);
        }
        if (found.length === 0) continue;
        const prefix = `/${map.section}/${map.kind}/${pointerToken(key)}`;
        for (const e of found) errors.push({ ...e, instancePath: prefix + e.instancePath });
      }
    }
    return errors.length === 0 ? [] : summarise(errors);
  };
}

type JsonSchema = {
  properties?: Record<string, JsonSchema>;
  additionalProperties?: unknown;
  definitions?: Record<string, unknown>;
} & Record<string, unknown>;

/** The maps `<section>.<kind>` whose schema is just "an object of `$ref`s" (routers, services, middlewares). */
function entryMaps(ajv: Ajv, schema: JsonSchema): EntryMap[] {
  const out: EntryMap[] = [];
  for (const [section, sectionSchema] of Object.entries(schema.properties ?? {})) {
    for (const [kind, mapSchema] of Object.entries(sectionSchema.properties ?? {})) {
      const entry = mapSchema.additionalProperties as { $ref?: unknown } | undefined;
      const simple = Object.keys(mapSchema).every((k) => MAP_KEYWORDS.has(k));
      if (!simple || typeof entry?.$ref !== 'string' || !entry.$ref.startsWith('#/definitions/')) continue;
      out.push({ section, kind, validate: ajv.compile({ definitions: schema.definitions, $ref: entry.$ref }) });
    }
  }
  return out;
}

function entriesOf(config: unknown, map: EntryMap): Record<string, unknown> | null {
  const section = isObject(config) ? config[map.section] : undefined;
  const entries = isObject(section) ? section[map.kind] : undefined;
  return isObject(entries) ? entries : null;
}

/** The config with the checked-apart maps emptied (copies of the levels above them only). */
function skeleton(config: unknown, maps: EntryMap[]): unknown {
  if (!isObject(config)) return config;
  const out: Record<string, unknown> = { ...config };
  for (const map of maps) {
    const section = out[map.section];
    if (!isObject(section) || !isObject(section[map.kind])) continue;
    out[map.section] = { ...section, [map.kind]: {} };
  }
  return out;
}

/** RFC 6901 escaping of one JSON pointer token. */
const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Ajv reports a failed `oneOf` (middlewares, services) once per branch. Keep what explains the
 * problem: the errors inside the branch that matched the type key when there are some, otherwise
 * the (identical) branch errors once; the bare "must match exactly one schema" only as a last resort.
 */
function summarise(errors: ErrorObject[]): SchemaWarning[] {
  const oneOfPaths = new Set(errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath));
  const hasDeeper = new Map<string, boolean>();
  for (const path of oneOfPaths)
    hasDeeper.set(
      path,
      errors.some((e) => e.instancePath.startsWith(path + '/')),
    );
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
    const explained = [...out.values()].some(
      (w) => w.path === e.instancePath || w.path.startsWith(e.instancePath + '/'),
    );
    if (e.keyword === 'oneOf' && !explained) add(e);
  }
  // by path, so the memo's order of checking does not show
  return [...out.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : a.message < b.message ? -1 : a.message > b.message ? 1 : 0,
  );
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
