/**
 * The one validation-message formatter (API.md §2.1): request bodies, queries and params, settings
 * at startup and hand-edited data files all explain a failure the same way. A message names what
 * is allowed and what was received (`must be one of: off, ops, all (received "of"; did you mean
 * "off"?)`), and a failed union (`anyOf`/`oneOf`) reports the branch that matched best instead of
 * one error per branch (`must be integer or null (received string "high")`).
 *
 * It works on Ajv errors. TypeBox schemas are JSON Schema, so data files and settings (checked
 * with TypeBox for speed) are explained by compiling the same schema with Ajv on failure only.
 */
import { Ajv, type ErrorObject } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { addFormats } from '../formats.ts';
import type { ErrorDetail } from './app-error.ts';
import { pointerToken } from '../json-pointer.ts';

// Ajv's own default for the params type: each keyword has its own params shape
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AjvError = ErrorObject<string, Record<string, any>, unknown>;

const UNION = new Set(['anyOf', 'oneOf']);
/** Keywords that say "the value itself is of the wrong kind" (as opposed to a problem inside it). */
const VALUE_LEVEL = new Set(['type', 'const', 'enum']);

/** A value as it appears in a message: strings quoted, long things cut. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  const text =
    typeof value === 'string' ? JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value) : String(value);
  return typeof value === 'string' ? `string ${text}` : `${typeof value} ${text}`;
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j];
      row[j] = Math.min(
        row[j] + 1,
        row[j - 1] + 1,
        previous + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1),
      );
      previous = current;
    }
  }
  return row[b.length];
}

/** The allowed value closest to `received` when it is an obvious typo, else null. */
export function closest(received: unknown, allowed: unknown[]): string | null {
  if (typeof received !== 'string' || received === '') return null;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    if (typeof candidate !== 'string') continue;
    const d = distance(received, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : null;
}

/** Allowed values (consts) and types as one phrase: `one of: a, b`, `integer or null`. */
function allowedPhrase(consts: unknown[], types: string[], received: unknown): string {
  const parts: string[] = [];
  if (consts.length === 1 && types.length === 0)
    return `must be ${JSON.stringify(consts[0])} (received ${describe(received)})`;
  if (consts.length > 0)
    parts.push(`one of: ${consts.map((c) => (typeof c === 'string' ? c : JSON.stringify(c))).join(', ')}`);
  // null last: "integer or null" reads as a nullable integer
  if (types.length > 0)
    parts.push([...new Set(types)].sort((a, b) => Number(a === 'null') - Number(b === 'null')).join(' or '));
  const hint = closest(received, consts);
  return `must be ${parts.join(', or ')} (received ${describe(received)}${hint ? `; did you mean "${hint}"?` : ''})`;
}

/** The value at a JSON Pointer. */
function at(data: unknown, pointer: string): unknown {
  if (!pointer) return data;
  let node: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** One Ajv error (not a union) → a detail. */
function single(e: AjvError, data: unknown): ErrorDetail {
  const value = at(data, e.instancePath);
  const p = e.params;
  switch (e.keyword) {
    case 'required':
      return { path: `${e.instancePath}/${pointerToken(String(p.missingProperty))}`, message: 'is required' };
    case 'additionalProperties':
      return {
        path: `${e.instancePath}/${pointerToken(String(p.additionalProperty))}`,
        message: 'is not a known field',
      };
    case 'type':
      return {
        path: e.instancePath,
        message: `must be ${String(p.type).replace(',', ' or ')} (received ${describe(value)})`,
      };
    case 'const':
      return { path: e.instancePath, message: allowedPhrase([p.allowedValue], [], value) };
    case 'enum':
      return { path: e.instancePath, message: allowedPhrase(p.allowedValues as unknown[], [], value) };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path: e.instancePath, message: `${e.message} (received ${describe(value)})` };
    case 'pattern':
      return { path: e.instancePath, message: `must match ${String(p.pattern)} (received ${describe(value)})` };
    case 'format':
      return {
        path: e.instancePath,
        message:
          p.format === 'go-duration'
            ? `must be a Go duration such as "300s" or "1m30s", at most 2562047h47m16.854775807s (received ${describe(value)})`
            : `must be a valid ${String(p.format)} (received ${describe(value)})`,
      };
    case 'minLength':
    case 'maxLength':
      return {
        path: e.instancePath,
        message: `${e.message} (received ${typeof value === 'string' ? `${value.length} characters` : describe(value)})`,
      };
    case 'minItems':
    case 'maxItems':
      return {
        path: e.instancePath,
        message: `${e.message} (received ${Array.isArray(value) ? `${value.length} items` : describe(value)})`,
      };
    default:
      return { path: e.instancePath, message: e.message ?? 'is invalid' };
  }
}

const branchOf = (union: AjvError, e: AjvError): number | null => {
  const prefix = `${union.schemaPath}/`;
  if (!e.schemaPath.startsWith(prefix)) return null;
  return Number(e.schemaPath.slice(prefix.length).split('/')[0]);
};

/**
 * Whether a branch's errors say the value is of the wrong kind for it (a type, const or enum
 * failure on the value itself), as opposed to a problem inside a value of the right kind. A union
 * nested in the branch is of the wrong kind when each of its own branches is.
 */
function wrongKind(list: AjvError[], pointer: string): boolean {
  const nested = list.filter((e) => UNION.has(e.keyword) && e.instancePath === pointer);
  const outerNested = nested.filter((u) => !nested.some((v) => v !== u && branchOf(v, u) !== null));
  const inNested = (e: AjvError) => outerNested.some((u) => u === e || branchOf(u, e) !== null);
  if (list.some((e) => !inNested(e) && e.instancePath === pointer && VALUE_LEVEL.has(e.keyword))) return true;
  return outerNested.some((u) => {
    const branches = new Map<number, AjvError[]>();
    for (const e of list) {
      const branch = branchOf(u, e);
      if (branch !== null) branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    return [...branches.values()].every((b) => wrongKind(b, pointer));
  });
}

/** Details for a list of Ajv errors, unions reduced to their best branch. */
function reduce(errors: AjvError[], data: unknown): ErrorDetail[] {
  const unions = errors.filter((e) => UNION.has(e.keyword));
  // outermost unions: not inside a branch of another union in this list
  const outer = unions.filter((u) => !unions.some((v) => v !== u && branchOf(v, u) !== null));
  const consumed = new Set<AjvError>();
  const out: ErrorDetail[] = [];
  for (const union of outer) {
    consumed.add(union);
    const branches = new Map<number, AjvError[]>();
    for (const e of errors) {
      const branch = branchOf(union, e);
      if (branch === null) continue;
      consumed.add(e);
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const value = at(data, union.instancePath);
    const candidates = [...branches.values()].filter((list) => !wrongKind(list, union.instancePath));
    if (candidates.length === 0) {
      // the value fits no branch at all: name every allowed value and type
      const consts: unknown[] = [];
      const types: string[] = [];
      for (const list of branches.values()) {
        for (const e of list) {
          if (e.instancePath !== union.instancePath) continue;
          if (e.keyword === 'const') consts.push(e.params.allowedValue);
          else if (e.keyword === 'enum') consts.push(...(e.params.allowedValues as unknown[]));
          else if (e.keyword === 'type') types.push(...String(e.params.type).split(','));
        }
      }
      out.push({ path: union.instancePath, message: allowedPhrase(consts, types, value) });
      continue;
    }
    // the branch that got furthest: fewest errors, then deepest
    const depth = (list: AjvError[]) => Math.max(...list.map((e) => e.instancePath.length));
    candidates.sort((a, b) => a.length - b.length || depth(b) - depth(a));
    out.push(...reduce(candidates[0], data));
  }
  // a format failure explains the value better than the pattern that goes with it
  const formatted = new Set(errors.filter((e) => e.keyword === 'format').map((e) => e.instancePath));
  for (const e of errors)
    if (!consumed.has(e) && !(e.keyword === 'pattern' && formatted.has(e.instancePath))) out.push(single(e, data));
  const seen = new Set<string>();
  return out.filter((d) => {
    const key = `${d.path}\0${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Ajv errors of one validation of `data` → `{path, message}` details (paths unprefixed). */
export function explainAjv(errors: readonly AjvError[], data: unknown): ErrorDetail[] {
  return reduce([...errors], data);
}

const explainer = addFormats(new Ajv({ allErrors: true, strict: false, strictNumbers: true }));
const compiled = new WeakMap<TSchema, ReturnType<Ajv['compile']>>();

/** Details for a value that failed a TypeBox schema (empty if Ajv finds nothing: then TypeBox's message is used). */
export function explainSchema(schema: TSchema, value: unknown): ErrorDetail[] {
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = explainer.compile(schema);
    } catch {
      return []; // a schema Ajv cannot compile here (e.g. a duplicate $id): the caller's own message stands
    }
    compiled.set(schema, validate);
  }
  if (validate(value)) return [];
  return explainAjv(validate.errors ?? [], value);
}
