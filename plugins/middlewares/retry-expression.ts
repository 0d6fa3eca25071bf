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
import { parsePredicate, reflectCall, refuse, type GoValue, type PredicateDef } from '../../model/go-predicate.ts';

/** oxy's buffer functions, none taking an argument: what each returns (Go's %T). */
const FUNCTIONS: Record<string, string> = {
  RequestMethod: 'buffer.toString',
  IsNetworkError: 'buffer.hpredicate',
  Attempts: 'buffer.toInt',
  ResponseCode: 'buffer.toInt',
};
const PREDICATE = 'buffer.hpredicate';

/** and/or(fns ...hpredicate) */
const join = (args: GoValue[]): GoValue => {
  reflectCall(args, [PREDICATE], true);
  return { type: PREDICATE };
};
/** eq/neq for both mappers, lt/gt/le/ge for toInt only; the value's type per mapper. */
const compare =
  (order: boolean) =>
  ([mapper, value]: GoValue[]): GoValue => {
    const wanted =
      mapper.type === 'buffer.toInt' ? 'int' : mapper.type === 'buffer.toString' && !order ? 'string' : null;
    if (!wanted) refuse(`unsupported argument: ${mapper.type}`);
    if (value.type !== wanted) refuse(`expected ${wanted}, got ${value.type}`);
    return { type: PREDICATE };
  };

const BUFFER: PredicateDef = {
  functions: Object.fromEntries(
    Object.entries(FUNCTIONS).map(([name, type]) => [
      name,
      (args: GoValue[]) => {
        reflectCall(args, []);
        return { type };
      },
    ]),
  ),
  operators: {
    '&&': join,
    '||': join,
    '==': compare(false),
    '!=': compare(false),
    '<': compare(true),
    '>': compare(true),
    '<=': compare(true),
    '>=': compare(true),
  },
};

/** Traefik's error for a buffering `retryExpression`, or null when it builds the middleware. */
export function retryExpressionError(expression: string): string | null {
  if (expression === '') return null; // Traefik sets no retry predicate then
  const parsed = parsePredicate(BUFFER, expression);
  if ('error' in parsed) return parsed.error;
  return parsed.value.type === PREDICATE ? null : `expected predicate, got ${parsed.value.type}`;
}
