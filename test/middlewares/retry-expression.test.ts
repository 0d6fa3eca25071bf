/**
 * buffering `retryExpression` as Traefik builds it (oxy buffer.Retry over vulcand/predicate): our
 * answer for each of 524 expressions measured on Traefik 3.7.15 (238 of them on 3.5.3 too, same
 * errors) — the same verdict for every one, and Traefik's error text word for word except where
 * our message says it is ours (Go types and function literals).
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { parseGoExpression } from '../../model/go-expression.ts';
import { retryExpressionError } from '../../plugins/middlewares/retry-expression.ts';
import { assertClientError, buildApp, call } from './support.ts';

const MEASURED: { expressions: Array<{ expression: string; traefik: string | null }> } = JSON.parse(
  readFileSync(new URL('../fixtures/retry-expressions-traefik.json', import.meta.url), 'utf8'),
);
const OURS = /starts a Go type or function literal/;

test('every measured expression: built or refused as Traefik does, with its error text', (t) => {
  let built = 0;
  for (const { expression, traefik } of MEASURED.expressions) {
    const ours = retryExpressionError(expression);
    if (traefik === null) {
      built++;
      t.is(ours, null, JSON.stringify(expression));
    } else if (ours !== null && OURS.test(ours)) t.pass();
    else t.is(ours, traefik, JSON.stringify(expression));
  }
  t.true(built > 100, `${built} built`);
});

test('the expressions of the task, and the ones Traefik documents', (t) => {
  const refused: Array<[string, string]> = [
    ['Attempts( < 2', "1:11: expected operand, found '<'"],
    ['Foo()', 'unsupported function: Foo'],
    ["Attempts() < 'x'", "unsupported function argument type: 'CHAR'"],
    ['IsNetworkError() && ', "1:21: expected operand, found 'EOF'"],
    [' ', "1:2: expected operand, found 'EOF'"],
    ['!IsNetworkError()', '! is not supported'],
    ['Attempts()', 'expected predicate, got buffer.toInt'],
    ['2 > Attempts()', 'unsupported argument: int'],
    ['Attempts() < 2.5', 'expected int, got float64'],
    ['RequestMethod() < "GET"', 'unsupported argument: buffer.toString'],
    ['Attempts() < 2 && 3', 'reflect: cannot use int as type buffer.hpredicate in Call'],
    ['Attempts(1) < 2', 'reflect: Call with too many input arguments'],
    ['IsNetworkError()\n&& Attempts() < 2', "2:1: expected 'EOF', found '&&'"],
    ['Attempts() < 08', "1:15: invalid digit '8' in octal literal"],
    ['Attempts( < 2 @', "1:11: expected operand, found '<' (and 1 more errors)"],
  ];
  for (const [expression, error] of refused) t.is(retryExpressionError(expression), error, expression);
  for (const expression of [
    '',
    'ResponseCode() == 503 || Attempts() < 3',
    'IsNetworkError() && Attempts() < 2',
    'Attempts() <= 2 && ResponseCode() == 502',
    '(IsNetworkError() || ResponseCode() == 500) && Attempts() <= 2',
    'RequestMethod() == "GET" && Attempts() < (2)',
    'IsNetworkError() &&\n  Attempts() < 2 // retry once\n',
    'IsNetworkError /* x */ ()',
  ])
    t.is(retryExpressionError(expression), null, JSON.stringify(expression));
});

test('Go positions count bytes, and a final newline stays on the last line', (t) => {
  t.deepEqual(parseGoExpression('"é" @'), { error: "1:6: illegal character U+0040 '@'" });
  t.deepEqual(parseGoExpression('a &&\n'), { error: "1:6: expected operand, found 'EOF'" });
  t.deepEqual(parseGoExpression('\n\n'), { error: "2:2: expected operand, found 'EOF'" });
});

test('nesting deeper than the stack: accepted (Go reads 100000 levels), never a 500', (t) => {
  const deep = `${'('.repeat(20_000)}IsNetworkError()${')'.repeat(20_000)}`;
  t.is(retryExpressionError(deep), null);
});

test('POST /api/middlewares refuses a retryExpression Traefik cannot build at /config/retryExpression', async (t) => {
  const app = await buildApp(t);
  const refused = await call(app, {
    method: 'POST',
    url: '/api/middlewares',
    payload: { id: 'buf', name: 'buf', type: 'buffering', config: { retryExpression: 'Attempts( < 2' } },
  });
  assertClientError(t, refused, 422, 'validation_failed');
  t.deepEqual(refused.body.details, [
    {
      path: '/config/retryExpression',
      message: `is not a retry expression Traefik can build (Traefik: "1:11: expected operand, found '<'")`,
    },
  ]);
  t.is((await call(app, { method: 'GET', url: '/api/middlewares/buf' })).status, 404);
  const built = await call(app, {
    method: 'POST',
    url: '/api/middlewares',
    payload: {
      id: 'buf',
      name: 'buf',
      type: 'buffering',
      config: { retryExpression: 'IsNetworkError() && Attempts() < 2' },
    },
  });
  t.is(built.status, 201, JSON.stringify(built.body));
});

test('expressions nested deeper than the stack are never a 500: accepted, as Traefik reads up to 100000 levels', async (t) => {
  const app = await buildApp(t);
  const nest = (inner: string) => `${'('.repeat(20_000)}${inner}${')'.repeat(20_000)}`;
  for (const [type, config] of [
    ['buffering', { retryExpression: nest('IsNetworkError()') }],
    ['circuitBreaker', { expression: nest('NetworkErrorRatio() > 0.5') }],
  ] as const) {
    const reply = await call(app, { method: 'POST', url: '/api/middlewares', payload: { name: type, type, config } });
    t.is(reply.status, 201, `${type}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
  }
});
