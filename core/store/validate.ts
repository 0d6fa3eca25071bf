/** Turns file text into a validated value or an InvalidFile with line and column (API.md §3.3). */
import { isUtf8 } from 'node:buffer';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import '../formats.ts'; // registers the string formats schemas use (go-duration) with TypeBox
import { explainSchema } from '../errors/explain.ts';
import { loneSurrogateAt } from '../nesting.ts';
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
  { ok: true; value: unknown; parsed: ParsedYaml } | { ok: false; syntax: boolean; error: InvalidFile };

/**
 * A data file's bytes as text, or null with the position of the first byte that is not UTF-8 (API.md
 * §2 Encoding: decoded leniently they would be served as U+FFFD, another value than the file holds).
 */
export function decodeFileBytes(
  bytes: Buffer,
): { text: string; invalidAt: null } | { text: string; invalidAt: { line: number; column: number } } {
  const text = bytes.toString('utf8');
  if (isUtf8(bytes)) return { text, invalidAt: null };
  // the lenient decoder puts one U+FFFD per bad sequence; the first one the bytes do not spell is it
  for (let at = text.indexOf('\uFFFD'); at !== -1; at = text.indexOf('\uFFFD', at + 1)) {
    const offset = Buffer.byteLength(text.slice(0, at));
    if (bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd) continue;
    const before = text.slice(0, at);
    const lineStart = before.lastIndexOf('\n') + 1;
    return { text, invalidAt: { line: before.split('\n').length, column: at - lineStart + 1 } };
  }
  return { text, invalidAt: { line: 1, column: 1 } }; // not reached: isUtf8 and the decoder agree
}

/**
 * The outcome for bytes that are not UTF-8, at their first bad byte: a syntax error, so an editor's
 * half-written multibyte character is read once more (collection ingest).
 */
export function notUtf8(file: string, at: { line: number; column: number }): ParseOutcome {
  return {
    ok: false,
    syntax: true,
    error: { path: file, ...at, message: `not valid UTF-8 at line ${at.line}, column ${at.column}` },
  };
}

/** Parses YAML text, mapping syntax errors and lone UTF-16 surrogates to an InvalidFile. */
export function parseFileText(file: string, text: string): ParseOutcome {
  try {
    const parsed = parseYaml(text);
    // only an escape (\ud800, \U0000d800) makes one: UTF-8 text cannot hold a lone surrogate
    const lone = /\\[uU]/.test(text) ? loneSurrogateAt(parsed.value) : null;
    if (lone !== null) {
      const field = lone.replace(/^\//, '') || 'value';
      const message = `${field}: must be valid Unicode text (it holds a lone UTF-16 surrogate, \\uD800-\\uDFFF)`;
      return { ok: false, syntax: false, error: invalidAt(file, parsed, lone, message) };
    }
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
