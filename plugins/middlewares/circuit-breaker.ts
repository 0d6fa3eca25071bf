/**
 * A circuitBreaker `expression` as Traefik 3.7.15 builds it: oxy's cbreaker hands it to
 * github.com/vulcand/predicate (model/go-predicate.ts), which reads it with Go's parser.ParseExpr.
 * NetworkErrorRatio() and ResponseCodeRatio(from, to, dividedByFrom, dividedByTo) (four int literals)
 * compare with a float literal (`> 0.5`; `> 1` is refused: "expected int, got int", oxy's text);
 * LatencyAtQuantileMS(<float literal>) (`50.0`; `50` is refused: "reflect: Call using int as type
 * float64") compares with an int literal (`> 100`; `> 1.5` is refused); comparisons are joined by
 * `&&`, `||` and parentheses. Function names are case-sensitive; `!`, a bare function and a literal
 * on the left are refused. Errors are Traefik's text (checked against oxy v2.1.0's cbreaker.New).
 */
import { parsePredicate, reflectCall, refuse, type GoValue, type PredicateDef } from '../../model/go-predicate.ts';

const PREDICATE = 'cbreaker.hpredicate';
const TO_INT = 'cbreaker.toInt';
const TO_FLOAT = 'cbreaker.toFloat64';

const fn =
  (params: string[], type: string) =>
  (args: GoValue[]): GoValue => {
    reflectCall(args, params);
    return { type };
  };
/** and/or(fns ...hpredicate) */
const join = (args: GoValue[]): GoValue => {
  reflectCall(args, [PREDICATE], true);
  return { type: PREDICATE };
};
/** oxy's eq/lt/gt: the mapper's type decides the value's; its float64LT/GT say "expected int" */
const compare =
  (name: 'eq' | 'lt' | 'gt') =>
  ([mapper, value]: GoValue[]): GoValue => {
    const wanted = mapper.type === TO_INT ? 'int' : mapper.type === TO_FLOAT ? 'float64' : null;
    if (!wanted) refuse(`${name}: unsupported argument: ${mapper.type}`);
    const said = name === 'eq' ? wanted : 'int';
    if (value.type !== wanted) refuse(`expected ${said}, got ${value.type}`);
    return { type: PREDICATE };
  };
/** le/ge: lt/gt, then eq */
const orEqual = (name: 'lt' | 'gt') => (args: GoValue[]) => {
  compare(name)(args);
  return compare('eq')(args);
};

const CBREAKER: PredicateDef = {
  functions: {
    NetworkErrorRatio: fn([], TO_FLOAT),
    ResponseCodeRatio: fn(['int', 'int', 'int', 'int'], TO_FLOAT),
    LatencyAtQuantileMS: fn(['float64'], TO_INT),
  },
  operators: {
    '&&': join,
    '||': join,
    '==': compare('eq'),
    '!=': compare('eq'),
    '<': compare('lt'),
    '>': compare('gt'),
    '<=': orEqual('lt'),
    '>=': orEqual('gt'),
  },
};

/** Traefik's complaint about a circuitBreaker expression, or null when it builds. */
export function circuitBreakerError(expression: string): string | null {
  const parsed = parsePredicate(CBREAKER, expression);
  if ('error' in parsed) return parsed.error;
  return parsed.value.type === PREDICATE ? null : `expected predicate, got ${parsed.value.type}`;
}
