/** Turns file text into a validated value or an InvalidFile with line and column (API.md §3.3). */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import '../formats.ts'; // registers the string formats schemas use (go-duration) with TypeBox
import { explainSchema } from '../errors/explain.ts';
import type { InvalidFile } from './types.ts';
import { parseYaml, YamlSyntaxError, type ParsedYaml } from './yaml-file.ts';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** Compiles a TypeBox schema once (TypeCompiler is ~10× faster than Value.Check on hot paths). */
export function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

export type ParseOutcome =
  { ok: true; value: unknown; parsed: ParsedYaml } | { ok: false; syntax: true; error: InvalidFile };

/** Parses YAML text, mapping syntax errors to an InvalidFile. */
export function parseFileText(file: string, text: string): ParseOutcome {
  try {
    const parsed = parseYaml(text);
    return { ok: true, value: parsed.value, parsed };
  } catch (err) {
    const e = err as YamlSyntaxError;
    return {
      ok: false,
      syntax: true,
      error: {
        path: file,
        line: e.line ?? null,
        column: e.column ?? null,
        message: e.nesting ? e.message : `invalid YAML: ${e.message}`,
      },
    };
  }
}

/** Drops unknown fields, then validates; returns the cleaned value or the first error located in the file. */
export function validateAgainst<T>(
  schema: TSchema,
  value: unknown,
  file: string,
  parsed: ParsedYaml,
  pointerPrefix = '',
): { ok: true; value: T } | { ok: false; error: InvalidFile } {
  const cleaned = Value.Clean(schema, structuredClone(value));
  const check = checkerFor(schema);
  if (check.Check(cleaned)) return { ok: true, value: cleaned as T };
  // explained like a request body (core/errors/explain.ts), TypeBox's own message as a fallback
  const explained = explainSchema(schema, cleaned)[0];
  const first = explained ?? {
    path: check.Errors(cleaned).First()!.path,
    message: check.Errors(cleaned).First()!.message,
  };
  return {
    ok: false,
    error: invalidAt(
      file,
      parsed,
      pointerPrefix + first.path,
      `${first.path.replace(/^\//, '') || 'value'}: ${first.message}`,
    ),
  };
}

/** An InvalidFile positioned at the node of `pointer`. */
export function invalidAt(file: string, parsed: ParsedYaml, pointer: string, message: string): InvalidFile {
  const pos = parsed.locate(pointer);
  return { path: file, line: pos?.line ?? null, column: pos?.column ?? null, message };
}
