/**
 * github.com/vulcand/predicate's Parse (v1.3.0, the version Traefik 3.7.15 links) over the
 * expression Go's parser.ParseExpr reads (model/go-expression.ts): operators and parentheses by
 * predicate's `parse`, literals, identifiers, selectors, index and calls by its `evaluateExpr`, and
 * each function or operator called as reflect.Value.Call would (its panics are predicate's errors).
 * Traefik hands it a buffering `retryExpression` (oxy's buffer), a circuitBreaker `expression`
 * (oxy's cbreaker) and a TCP router rule (pkg/rules): each caller says which functions and operators
 * exist and what they return. Walks go through settle(): Go reads 100000 levels of nesting.
 */
import { each, later, parseGoExpression, settle, type Deep, type GoExpr } from './go-expression.ts';

/** A value predicate passes around: Go's `%T`, and the value where a check needs it. */
export interface GoValue {
  type: string;
  value?: unknown;
}

/** One of predicate's errors (or a function's), as Traefik reports it. */
export class PredicateError extends Error {}
export const refuse = (message: string): never => {
  throw new PredicateError(message);
};

export interface PredicateDef {
  /** predicate's Functions, by the exact name (a Go map): called with the arguments' values. */
  functions: Record<string, (args: GoValue[]) => GoValue>;
  /** predicate's Operators by Go token (`&&`, `!`, `==`…); one not given is `<op> is not supported`. */
  operators: Partial<Record<string, (args: GoValue[]) => GoValue>>;
}

/**
 * reflect.Value.Call's checks for a Go function of parameter types `params` (with `variadic`, the
 * last one repeats): the count, then each argument in order.
 */
export function reflectCall(args: GoValue[], params: string[], variadic = false): void {
  const fixed = variadic ? params.length - 1 : params.length;
  if (args.length < fixed) refuse('reflect: Call with too few input arguments');
  if (!variadic && args.length > fixed) refuse('reflect: Call with too many input arguments');
  for (const [i, arg] of args.entries()) {
    const param = params[Math.min(i, params.length - 1)];
    if (param === 'any' || arg.type === param) continue;
    if (i < fixed) refuse(`reflect: Call using ${arg.type} as type ${param}`);
    refuse(`reflect: cannot use ${arg.type} as type ${param} in Call`);
  }
}

const INT64_MAX = 2n ** 63n - 1n;

/** predicate's literalToValue: strconv.Atoi for INT, ParseFloat for FLOAT, Unquote for STRING. */
function literal(kind: string, text: string): GoValue {
  const refused = (parser: string, reason: string) =>
    refuse(`failed to parse argument: ${text}, error: strconv.${parser}: parsing ${JSON.stringify(text)}: ${reason}`);
  if (kind === 'INT') {
    if (!/^[0-9]+$/.test(text)) return refused('Atoi', 'invalid syntax');
    if (BigInt(text) > INT64_MAX) return refused('Atoi', 'value out of range');
    return { type: 'int', value: Number(text) };
  }
  if (kind === 'FLOAT') {
    const decimal = text.replaceAll('_', '');
    if (!/^0[xX]/.test(decimal) && !Number.isFinite(Number(decimal))) refused('ParseFloat', 'value out of range');
    return { type: 'float64' };
  }
  if (kind === 'STRING') return { type: 'string', value: unquote(text) };
  return refuse(`unsupported function argument type: '${kind}'`);
}

const SIMPLE: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** strconv.Unquote of a string literal Go's scanner accepted (`…` raw, "…" with escapes). */
function unquote(text: string): string {
  if (text.startsWith('`')) return text.slice(1, -1).replaceAll('\r', '');
  return text.slice(1, -1).replace(/\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{3}|.)/gs, (escape) => {
    const c = escape[1];
    if (c in SIMPLE) return SIMPLE[c];
    if (c === 'x' || c === 'u' || c === 'U') return String.fromCodePoint(parseInt(escape.slice(2), 16));
    if (/[0-7]/.test(c)) return String.fromCharCode(parseInt(escape.slice(1), 8));
    return c; // \\ and \"
  });
}

/** predicate's getIdentifier: the called name, `pkg.Name` for a selector. */
function functionName(fun: GoExpr): string {
  if (fun.kind === 'SelectorExpr') {
    if (fun.x.kind !== 'Ident') return refuse(`expected selector identifier, got: *ast.${fun.x.kind}`);
    return `${fun.x.name}.${fun.sel}`;
  }
  if (fun.kind === 'Ident') return fun.name;
  return refuse(`expected identifier, got: *ast.${fun.kind}`);
}

/** predicate's evaluateExpr: literals, identifiers, selectors, index and calls. */
function evaluate(def: PredicateDef, node: GoExpr): Deep<GoValue> {
  switch (node.kind) {
    case 'BasicLit':
      return literal(node.literal, node.value);
    case 'IndexExpr':
      return refuse('properties are not supported');
    case 'Ident':
      return refuse(`${node.name} is not defined`);
    case 'SelectorExpr': {
      const fields = [node.sel];
      let x = node.x;
      while (x.kind === 'SelectorExpr') {
        fields.unshift(x.sel);
        x = x.x;
      }
      if (x.kind !== 'Ident') return refuse(`unsupported selector type: *ast.${x.kind}`);
      return refuse(`${[x.name, ...fields].join('.')} is not defined`);
    }
    case 'CallExpr': {
      const name = functionName(node.fun);
      const fn = def.functions[name] ?? refuse(`unsupported function: ${name}`);
      return each(node.args, (arg) => evaluate(def, arg), fn);
    }
    default:
      return refuse(`*ast.${node.kind} is not supported`);
  }
}

/** predicate's parse: operators and parentheses, then evaluateExpr for the rest. */
function build(def: PredicateDef, node: GoExpr): Deep<GoValue> {
  while (node.kind === 'ParenExpr') node = node.x;
  const operator = (op: string) => def.operators[op] ?? refuse(`${op} is not supported`);
  if (node.kind === 'UnaryExpr') {
    const not = operator(node.op);
    return later(
      () => build(def, node.x),
      (x) => not([x]),
    );
  }
  if (node.kind !== 'BinaryExpr') return evaluate(def, node);
  const { op, x, y } = node;
  return later(
    () => build(def, x),
    (left) =>
      later(
        () => build(def, y),
        (right) => operator(op)([left, right]),
      ),
  );
}

/**
 * What predicate's Parse gives for `src`: the value, or the error Traefik reports (Go's parser
 * error first, then predicate's or a function's).
 */
export function parsePredicate(def: PredicateDef, src: string): { value: GoValue } | { error: string } {
  const parsed = parseGoExpression(src);
  if ('error' in parsed) return parsed;
  try {
    return { value: settle(build(def, parsed.expr)) };
  } catch (error) {
    if (error instanceof PredicateError) return { error: error.message };
    throw error;
  }
}
