/**
 * A buffering `retryExpression` as Traefik builds it: oxy's buffer.Retry hands it to
 * github.com/vulcand/predicate, which reads it with Go's parser.ParseExpr and then calls oxy's
 * functions through reflection. IsNetworkError() is a predicate; Attempts() and ResponseCode()
 * compare with an int literal (`== != < > <= >=`), RequestMethod() with a string (`== !=`); the
 * function on the left, `&&`/`||` join predicates, parentheses anywhere. Everything else — `!`,
 * `-1`, `2 > Attempts()`, `Attempts() < 2.5`, an argument, an unknown or lower-case name, a bare
 * `Attempts()` — is refused with the error text below. Each case was measured on Traefik 3.7.15
 * and 3.5.3 (the same errors; 110 expressions, test/middlewares/retry-expression.test.ts). An
 * empty expression means "no retry" and is built.
 */
import { parseGoExpression, type GoExpr } from '../../model/go-expression.ts';

/** Go's %T of the values predicate passes around (oxy's mappers live in package buffer). */
type Value = 'int' | 'float64' | 'string' | 'buffer.toInt' | 'buffer.toString' | 'buffer.hpredicate';

const FUNCTIONS: Record<string, Value> = {
  RequestMethod: 'buffer.toString',
  IsNetworkError: 'buffer.hpredicate',
  Attempts: 'buffer.toInt',
  ResponseCode: 'buffer.toInt',
};
/** oxy's operators: and/or over predicates, eq/neq for both mappers, lt/gt/le/ge for toInt only */
const OPERATORS: Record<string, 'join' | 'equal' | 'order'> = {
  '&&': 'join',
  '||': 'join',
  '==': 'equal',
  '!=': 'equal',
  '<': 'order',
  '>': 'order',
  '<=': 'order',
  '>=': 'order',
};
const INT64_MAX = 2n ** 63n - 1n;

class BuildError extends Error {}
const fail = (message: string): never => {
  throw new BuildError(message);
};

/** predicate's literalToValue: strconv.Atoi for INT, ParseFloat for FLOAT, Unquote for STRING. */
function literal(kind: string, text: string): Value {
  const refused = (parser: string, reason: string) =>
    fail(`failed to parse argument: ${text}, error: strconv.${parser}: parsing ${JSON.stringify(text)}: ${reason}`);
  if (kind === 'INT') {
    if (!/^[0-9]+$/.test(text)) return refused('Atoi', 'invalid syntax');
    if (BigInt(text) > INT64_MAX) return refused('Atoi', 'value out of range');
    return 'int';
  }
  if (kind === 'FLOAT') {
    const decimal = text.replaceAll('_', '');
    if (!/^0[xX]/.test(decimal) && !Number.isFinite(Number(decimal))) refused('ParseFloat', 'value out of range');
    return 'float64';
  }
  if (kind === 'STRING') return 'string';
  return fail(`unsupported function argument type: '${kind}'`);
}

/** predicate's evaluateExpr: literals, identifiers, selectors, index and calls. */
function evaluate(node: GoExpr): Value {
  switch (node.kind) {
    case 'BasicLit':
      return literal(node.literal, node.value);
    case 'IndexExpr':
      return fail('properties are not supported');
    case 'Ident':
      return fail(`${node.name} is not defined`);
    case 'SelectorExpr': {
      const fields = [node.sel];
      let x = node.x;
      while (x.kind === 'SelectorExpr') {
        fields.unshift(x.sel);
        x = x.x;
      }
      if (x.kind !== 'Ident') return fail(`unsupported selector type: *ast.${x.kind}`);
      return fail(`${[x.name, ...fields].join('.')} is not defined`);
    }
    case 'CallExpr': {
      const { fun } = node;
      let name: string;
      if (fun.kind === 'SelectorExpr') {
        if (fun.x.kind !== 'Ident') return fail(`expected selector identifier, got: *ast.${fun.x.kind}`);
        name = `${fun.x.name}.${fun.sel}`;
      } else if (fun.kind === 'Ident') name = fun.name;
      else return fail(`expected identifier, got: *ast.${fun.kind}`);
      const result = FUNCTIONS[name] ?? fail(`unsupported function: ${name}`);
      for (const arg of node.args) evaluate(arg);
      // none of oxy's functions takes an argument
      if (node.args.length > 0) fail('reflect: Call with too many input arguments');
      return result;
    }
    default:
      return fail(`*ast.${node.kind} is not supported`);
  }
}

/** predicate's parse: operators and parentheses, then evaluateExpr for the rest. */
function build(node: GoExpr): Value {
  if (node.kind === 'ParenExpr') return build(node.x);
  // predicate maps `!` to its NOT operator, which oxy's buffer does not define
  if (node.kind === 'UnaryExpr') return fail(`${node.op} is not supported`);
  if (node.kind !== 'BinaryExpr') return evaluate(node);
  const x = build(node.x);
  const y = build(node.y);
  const operator = OPERATORS[node.op] ?? fail(`${node.op} is not supported`);
  if (operator === 'join') {
    for (const value of [x, y])
      if (value !== 'buffer.hpredicate') fail(`reflect: cannot use ${value} as type buffer.hpredicate in Call`);
  } else if (x === 'buffer.toInt' || (x === 'buffer.toString' && operator === 'equal')) {
    const wanted = x === 'buffer.toInt' ? 'int' : 'string';
    if (y !== wanted) fail(`expected ${wanted}, got ${y}`);
  } else fail(`unsupported argument: ${x}`);
  return 'buffer.hpredicate';
}

/** Traefik's error for a buffering `retryExpression`, or null when it builds the middleware. */
export function retryExpressionError(expression: string): string | null {
  if (expression === '') return null; // Traefik sets no retry predicate then
  try {
    const parsed = parseGoExpression(expression);
    if ('error' in parsed) return parsed.error;
    const value = build(parsed.expr);
    return value === 'buffer.hpredicate' ? null : `expected predicate, got ${value}`;
  } catch (error) {
    if (error instanceof BuildError) return error.message;
    // nesting deeper than this process's stack: Go reads up to 100000 levels, so accept
    if (error instanceof RangeError) return null;
    throw error;
  }
}
