import test from 'ava';
import { parseLossless, stringifyCanonical } from '../../model/lossless-json.ts';

test('integers above 2^53−1 survive a parse/stringify round trip digit for digit', (t) => {
  const text = '{"priority":9223372036854775807,"small":42,"neg":-9223372036854775808,"f":1.5}';
  const value = parseLossless(text) as Record<string, unknown>;
  t.is(value.priority, 9223372036854775807n);
  t.is(value.small, 42);
  t.is(stringifyCanonical(value), '{"f":1.5,"neg":-9223372036854775808,"priority":9223372036854775807,"small":42}');
});

test('keys are sorted recursively in code-unit order, arrays keep their order', (t) => {
  t.is(
    stringifyCanonical({ b: [{ z: 1, a: 2 }, 3], a: { é: 1, Z: 2, _: 3, a: 4, '': 5 } }),
    '{"a":{"":5,"Z":2,"_":3,"a":4,"é":1},"b":[{"a":2,"z":1},3]}',
  );
});

test('array-index-like keys sort as strings, not numerically', (t) => {
  t.is(
    stringifyCanonical({ statusRewrites: { 418: 1, 10: 2, 9: 3, '1a': 4 } }),
    '{"statusRewrites":{"10":2,"1a":4,"418":1,"9":3}}',
  );
});

test('a string that looks like the internal BigInt marker is written as a string', (t) => {
  t.is(stringifyCanonical({ s: '\u0000bigint:12', n: 12n }), '{"n":12,"s":"\\u0000bigint:12"}');
});

test('undefined members are left out and undefined array items become null, as JSON.stringify does', (t) => {
  t.is(stringifyCanonical({ a: undefined, b: [undefined, 1] }), '{"b":[null,1]}');
});

test('a parsed "__proto__" key is data: it is sorted and written like any other key', (t) => {
  const value = parseLossless('{"z":1,"__proto__":{"polluted":true},"a":2}');
  t.is(stringifyCanonical(value), '{"__proto__":{"polluted":true},"a":2,"z":1}');
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

test('objects already in order are written as they are, unsorted ones inside them are sorted', (t) => {
  const inner = { b: 1, a: 2 };
  t.is(
    stringifyCanonical({ a: [inner, { c: 3n }], b: { x: inner } }),
    '{"a":[{"a":2,"b":1},{"c":3}],"b":{"x":{"a":2,"b":1}}}',
  );
  t.deepEqual(Object.keys(inner), ['b', 'a'], 'the input is not changed');
});
