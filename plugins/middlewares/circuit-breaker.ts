/**
 * A circuitBreaker `expression` as Traefik 3.7.15 builds it (vulcand/predicate over Go expression
 * syntax): comparisons `<function> <op> <literal>` joined by `&&`, `||` and parentheses. Measured on
 * the binary (42 expressions): function names are case-sensitive; NetworkErrorRatio() and
 * ResponseCodeRatio(from, to, dividedByFrom, dividedByTo) (four decimal integers) compare with a
 * float literal (`> 0.5`; `> 1` is refused: "expected int, got int"); LatencyAtQuantileMS(<float>)
 * (`50.0`; `50` is refused: "reflect: Call using int as type float64") compares with a decimal
 * integer (`> 100`; `> 1.5` is refused); `!`, `-`, a bare function and a literal on the left are
 * refused.
 */

type Token = { kind: 'ident' | 'number' | 'op'; text: string } | { kind: 'end'; text: '' };

class ExpressionError extends Error {}
const fail = (message: string): never => {
  throw new ExpressionError(message);
};

const FLOAT = /^([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(\.[0-9]*)?[eE][+-]?[0-9]+|\.[0-9]+[eE][+-]?[0-9]+)$/;
const INT = /^[0-9]+$/;
const COMPARE = new Set(['<', '>', '<=', '>=', '==', '!=']);
/** Argument kinds per function, and what it compares with. */
const FUNCTIONS: Record<string, { args: Array<'int' | 'float'>; compares: 'int' | 'float' }> = {
  NetworkErrorRatio: { args: [], compares: 'float' },
  ResponseCodeRatio: { args: ['int', 'int', 'int', 'int'], compares: 'float' },
  LatencyAtQuantileMS: { args: ['float'], compares: 'int' },
};

function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const rest = text.slice(i);
    if (c === '\n') {
      const last = out.at(-1);
      if (last && (last.kind !== 'op' || last.text === ')') && rest.trim() !== '')
        fail("expected 'EOF', found newline");
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') i++;
    else if (/[A-Za-z_]/.test(c)) {
      const [word] = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)!;
      out.push({ kind: 'ident', text: word });
      i += word.length;
    } else if (/[0-9.]/.test(c)) {
      const [number] = /^([0-9]+\.?[0-9]*|\.[0-9]*)([eE][+-]?[0-9]+)?[0-9A-Za-z_.]*/.exec(rest)!;
      out.push({ kind: 'number', text: number });
      i += number.length;
    } else {
      const op = ['&&', '||', '<=', '>=', '==', '!=', '<', '>', '(', ')', ','].find((o) => rest.startsWith(o));
      if (!op) fail(`${c} is not supported`);
      out.push({ kind: 'op', text: op! });
      i += op!.length;
    }
  }
  out.push({ kind: 'end', text: '' });
  return out;
}

/** Traefik's complaint about a circuitBreaker expression, or null when it builds. */
export function circuitBreakerError(expression: string): string | null {
  try {
    const list = tokens(expression);
    let at = 0;
    const isOp = (text: string) => list[at].kind === 'op' && list[at].text === text;
    const literal = (kind: 'int' | 'float', what: string) => {
      const token = list[at++];
      if (token.kind !== 'number') fail(`${what} must be a number`);
      if (kind === 'int' && !INT.test(token.text)) fail(`${what} must be a decimal integer (received ${token.text})`);
      if (kind === 'float' && !FLOAT.test(token.text))
        fail(`${what} must be a decimal number with a point, such as 0.5 or 50.0 (received ${token.text})`);
    };
    const comparison = (): void => {
      if (isOp('(')) {
        at++;
        expression_();
        if (!isOp(')')) fail("expected ')'");
        at++;
        return;
      }
      const name = list[at];
      if (name.kind !== 'ident') return fail(`expected a function, found ${name.text || 'the end'}`);
      const spec = FUNCTIONS[name.text];
      if (!spec) return fail(`unsupported function: ${name.text}`);
      at++;
      if (!isOp('(')) return fail(`${name.text} is not defined`);
      at++;
      const args: string[] = [];
      while (!isOp(')')) {
        if (args.length >= spec.args.length) return fail(`${name.text} takes ${spec.args.length} arguments`);
        literal(spec.args[args.length], `argument ${args.length + 1} of ${name.text}`);
        args.push(list[at - 1].text);
        if (isOp(',')) at++;
        else if (!isOp(')')) return fail("missing ',' in argument list");
      }
      at++;
      if (args.length !== spec.args.length) return fail(`${name.text} takes ${spec.args.length} arguments`);
      const op = list[at];
      if (op.kind !== 'op' || !COMPARE.has(op.text))
        return fail(`${name.text}() must be compared with a value, such as ${name.text}(…) > 0.5`);
      at++;
      literal(spec.compares, `the value ${name.text} is compared with`);
    };
    const expression_ = (): void => {
      comparison();
      while (isOp('&&') || isOp('||')) {
        at++;
        comparison();
      }
    };
    expression_();
    if (list[at].kind !== 'end') fail(`expected 'EOF', found ${list[at].text}`);
    return null;
  } catch (error) {
    if (error instanceof ExpressionError) return error.message;
    // nesting deeper than this process's stack (a 500 before): Go reads up to 100000 levels, so accept
    if (error instanceof RangeError) return null;
    throw error;
  }
}
