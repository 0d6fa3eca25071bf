/**
 * docker compose's variable interpolation for the compose values the apply job publishes (Gerbil's
 * `ports:`): `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `${NAME:?error}`,
 * `${NAME?error}`, `${NAME:+alternative}`, `${NAME+alternative}` (nested in defaults too) and `$$` for
 * a literal `$`, with the variables of the `.env` file beside the compose file (compose's project
 * directory).
 *
 * Not the process environment: docker compose takes variables from the shell it runs in on the host,
 * which Stack Manager (a container with its own environment: PORT, HOST, …) never sees, and no
 * setting passes an environment down to plugins. So a variable that is neither in `.env` nor given a
 * default is refused naming it, where compose would warn and use an empty string (for a port: a
 * random host port, or a broken item).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export const DOT_ENV = '.env';

/** `.env`'s variables; `unresolved`: entries left out because they use a variable `.env` does not set, with why. */
export interface ComposeVariables {
  file: string;
  values: ReadonlyMap<string, string>;
  unresolved: ReadonlyMap<string, string>;
}

/** No `.env` (no compose file, or one that cannot be used): no variable is set. */
export const NO_VARIABLES: ComposeVariables = { file: DOT_ENV, values: new Map(), unresolved: new Map() };

/** A value that cannot be interpolated (unset variable, `:?` message, bad syntax); the message says why. */
export class InterpolationError extends Error {}

/** A `.env` file that cannot be read or parsed (line: 1-based, null when it could not be read). */
export class DotEnvError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    message: string,
  ) {
    super(message);
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Index of the `}` closing the `${` whose body starts at `from` (nested `${…}` skipped); -1 if none. */
function closing(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '$' && text[i + 1] === '$') i++;
    else if (text[i] === '$' && text[i + 1] === '{') {
      depth++;
      i++;
    } else if (text[i] === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** `NAME`, then an operator and its word, of a `${…}` body. */
function braced(body: string, vars: ComposeVariables | VariableLookup): string {
  const name = NAME.exec(body)?.[0];
  if (!name) throw new InterpolationError(`"\${${body}}" does not start with a variable name`);
  const rest = body.slice(name.length);
  const lookup = typeof vars === 'function' ? vars : lookupIn(vars);
  const value = lookup(name);
  if (rest === '') return value ?? unset(name, vars);
  const operator = /^(:?[-?+])/.exec(rest)?.[1];
  if (!operator) throw new InterpolationError(`"\${${body}}" has an unknown modifier after ${name}`);
  const word = () => expand(rest.slice(operator.length), vars);
  const empty = value === undefined || (operator.startsWith(':') && value === '');
  switch (operator.at(-1)) {
    case '-':
      return empty ? word() : value!;
    case '?':
      if (empty) throw new InterpolationError(`${name} is required: ${word() || `${name} is not set`}`);
      return value!;
    default: // '+'
      return empty ? '' : word();
  }
}

type VariableLookup = (name: string) => string | undefined;

const lookupIn =
  (vars: ComposeVariables): VariableLookup =>
  (name) =>
    vars.values.get(name);

function unset(name: string, vars: ComposeVariables | VariableLookup): never {
  if (typeof vars === 'function') throw new InterpolationError(`${name} is not set`);
  const why = vars.unresolved.get(name);
  throw new InterpolationError(
    why ??
      `${name} is not set in ${vars.file} and has no default (docker compose would read it from the shell it runs in, which Stack Manager does not see): add it to ${DOT_ENV} or write \${${name}:-<port>}`,
  );
}

function expand(text: string, vars: ComposeVariables | VariableLookup): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char !== '$') {
      out += char;
      continue;
    }
    const next = text[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '{') {
      const end = closing(text, i + 2);
      if (end < 0) throw new InterpolationError(`"${text}" has a "\${" without its "}"`);
      out += braced(text.slice(i + 2, end), vars);
      i = end;
    } else {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (!name) throw new InterpolationError(`"${text}" has a "$" that is neither $NAME, \${NAME} nor $$`);
      out += braced(name, vars);
      i += name.length;
    }
  }
  return out;
}

/** `text` with its variables replaced as docker compose does; throws InterpolationError. */
export function interpolate(text: string, vars: ComposeVariables): string {
  return expand(text, vars);
}

/** Every string in a compose value (a string, or a long-syntax mapping's values) interpolated. */
export function interpolateValue(value: unknown, vars: ComposeVariables): unknown {
  if (typeof value === 'string') return interpolate(value, vars);
  if (value && typeof value === 'object' && !Array.isArray(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateValue(item, vars)]));
  return value;
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\\': '\\', '"': '"', $: '$$' };

/**
 * Parses a `.env` file as compose does, one `KEY=VALUE` a line: `#` comments and blank lines skipped,
 * an optional `export `, `'single'` quotes literal, `"double"` quotes with `\n \t \\ \" \$` escapes,
 * unquoted values trimmed and cut at ` #`; double-quoted and unquoted values are interpolated with
 * the entries above them. A line without `=` (compose: take it from the shell) sets nothing.
 */
export function parseDotEnv(text: string, file: string): ComposeVariables {
  const values = new Map<string, string>();
  const unresolved = new Map<string, string>();
  const vars: ComposeVariables = { file, values, unresolved };
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const at = `${file}:${index + 1}`;
    const bad = (message: string) => new DotEnvError(file, index + 1, message);
    const assignment = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(=)?(.*)$/.exec(line);
    if (!assignment) throw bad(`line ${index + 1} is not KEY=VALUE`);
    const [, key, equals, rest] = assignment;
    if (!equals) return;
    let value = rest.trim();
    let literal = false;
    if (value.startsWith("'")) {
      const end = value.indexOf("'", 1);
      if (end < 0) throw bad(`the value of ${key} has no closing '`);
      value = value.slice(1, end);
      literal = true;
    } else if (value.startsWith('"')) {
      let out = '';
      let i = 1;
      for (; i < value.length && value[i] !== '"'; i++)
        if (value[i] === '\\' && i + 1 < value.length) out += ESCAPES[value[++i]] ?? `\\${value[i]}`;
        else out += value[i];
      if (i >= value.length) throw bad(`the value of ${key} has no closing "`);
      value = out;
    } else value = value.replace(/\s+#.*$/, '').trim();
    if (literal) {
      values.set(key, value);
      unresolved.delete(key);
      return;
    }
    try {
      values.set(
        key,
        expand(value, (name) => values.get(name)),
      );
      unresolved.delete(key);
    } catch (err) {
      values.delete(key);
      unresolved.set(key, `${key} in ${at} cannot be resolved: ${(err as Error).message}`);
    }
  });
  return vars;
}

/** The `.env` beside `composeFile` (none: no variables); an unreadable or malformed one throws DotEnvError. */
export async function readComposeVariables(composeFile: string): Promise<ComposeVariables> {
  const file = path.join(path.dirname(composeFile), DOT_ENV);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { file, values: new Map(), unresolved: new Map() };
    throw new DotEnvError(file, null, `cannot be read (${code ?? (err as Error).message})`);
  }
  return parseDotEnv(text, file);
}
