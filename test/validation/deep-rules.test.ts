/**
 * Go expressions nested deeper than this process's stack (a buffering retryExpression, a
 * circuitBreaker expression, a TCP router rule): Go's parser reads them up to its nesting limit
 * (go/parser maxNestLev, 100000) and stops there with `exceeded max nesting depth`; Traefik builds or
 * refuses them accordingly. 20,000 parentheses or `!`s overflowed the JS stack (500, or a thrown
 * RangeError in the import and the file watcher). The expected errors below were measured with Go
 * 1.26's go/parser (Traefik 3.7.15 is built with Go 1.26.9).
 */
import test from 'ava';
import { GO_MAX_NESTING, parseGoExpression } from '../../model/go-expression.ts';

const around = (levels: number, inner: string) => `${'('.repeat(levels)}${inner}${')'.repeat(levels)}`;

test("parseGoExpression reads 20,000 levels and stops at Go's nesting limit with Go's error", (t) => {
  t.is(GO_MAX_NESTING, 100_000);
  for (const src of [
    around(20_000, 'x'),
    `${'!'.repeat(20_000)}x`,
    `${'f('.repeat(20_000)}x${')'.repeat(20_000)}`,
    `${'a && ('.repeat(20_000)}x${')'.repeat(20_000)}`,
    Array(20_000).fill('a').join(' && '),
    around(99_998, 'x'),
    `${'!'.repeat(99_998)}x`,
  ])
    t.false('error' in parseGoExpression(src), src.slice(0, 12));
  // what Go 1.26's parser.ParseExpr answers (99 such cases compared while writing this: all agree)
  const measured: Array<[string, string]> = [
    [around(99_999, 'x'), '1:100001: exceeded max nesting depth'],
    [around(100_000, 'x'), '1:100001: exceeded max nesting depth'],
    [`${'!'.repeat(99_999)}x`, '1:100001: exceeded max nesting depth'],
    [`${'!'.repeat(100_000)})`, '1:100001: exceeded max nesting depth'],
    [`${'f('.repeat(50_000)}x${')'.repeat(50_000)}`, '1:100001: exceeded max nesting depth'],
    [`${'a && ('.repeat(100_000)}x${')'.repeat(100_000)}`, '1:300001: exceeded max nesting depth'],
    [`x${'.y'.repeat(100_000)}`, '1:200000: exceeded max nesting depth'],
    [around(33_331, ''), "1:33332: expected operand, found ')'"],
  ];
  for (const [src, error] of measured) t.deepEqual(parseGoExpression(src), { error }, src.slice(0, 12));
});
