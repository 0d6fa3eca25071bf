/**
 * The nesting limit's walks (core/nesting.ts, core/yaml-parse.ts): iterative at any depth, the
 * path of the first container past 64 levels, 64 itself allowed; YAML documents measured before
 * they are composed, aliases included.
 */
import test from 'ava';
import { YAMLError } from 'yaml';
import { loneSurrogateAt, MAX_NESTING, nestingPathOf, valueFault } from '../../core/nesting.ts';
import { parseYaml, YamlSyntaxError } from '../../core/store/yaml-file.ts';
import { parseYamlDocument, parseYamlValue } from '../../core/yaml-parse.ts';

/** `levels` nested arrays (built without recursion), `leaf` in the innermost. */
function nestedArrays(levels: number, leaf: unknown = 1): unknown {
  let value: unknown = [leaf];
  for (let i = 1; i < levels; i++) value = [value];
  return value;
}

const zeros = (n: number): string => '/0'.repeat(n);

test('a value of 64 levels passes, 65 fails at the 65th container, whatever the shape', (t) => {
  t.is(valueFault(nestedArrays(MAX_NESTING)), null);
  t.deepEqual(valueFault(nestedArrays(MAX_NESTING + 1)), {
    kind: 'nesting',
    path: zeros(64),
    message: 'nests deeper than 64 levels of arrays/objects',
  });
  // objects, with keys that need JSON Pointer escaping
  let object: unknown = { leaf: true };
  for (let i = 1; i < 70; i++) object = { 'a/b~c': object };
  t.is(valueFault(object)?.path, '/a~1b~0c'.repeat(64));
  // the first too-deep container in document order, not the first the walk happens to meet
  const twoBranches = { first: nestedArrays(80), second: nestedArrays(80) };
  t.is(valueFault(twoBranches)?.path, `/first${zeros(63)}`);
});

test('walks of a 1,000,000-level value do not throw and find the path', (t) => {
  const deep = nestedArrays(1_000_000);
  t.is(valueFault(deep)?.path, zeros(64));
  t.is(nestingPathOf(deep), zeros(64));
  // JSON.parse builds such a value without recursion: it reaches our walk intact
  t.is(valueFault(JSON.parse('['.repeat(500_000) + ']'.repeat(500_000)))?.path, zeros(64));
});

test('nesting is reported before a non-finite number; a shallow body reports its non-finite number', (t) => {
  const both = JSON.parse(`{"a":1e309,"b":${'['.repeat(70)}${']'.repeat(70)}}`);
  t.is(valueFault(both)?.kind, 'nesting');
  t.deepEqual(valueFault(JSON.parse('{"a":[1,{"b":-1e309}]}')), {
    kind: 'non_finite',
    path: '/a/1/b',
    message: 'must be a finite number (received a number beyond ±1.8e308)',
  });
  t.is(valueFault(JSON.parse('{"a":[1,{"b":"x"}],"c":null}')), null);
});

const yamlCases: Array<[string, string, RegExp, number]> = [
  [
    'flow sequences',
    'name: x\nconfig:\n  deep: ' + '['.repeat(2000) + '1' + ']'.repeat(2000) + '\n',
    /^config\/deep(\/0){62} nests deeper than 64 levels/,
    3,
  ],
  [
    'flow mappings',
    'config: ' + '{a: '.repeat(2000) + '1' + '}'.repeat(2000) + '\n',
    /^config(\/a){63} nests deeper than 64 levels/,
    1,
  ],
  [
    'block mappings',
    Array.from({ length: 1000 }, (_, i) => ' '.repeat(i) + 'k:\n').join('') + ' '.repeat(1000) + 'v: 1\n',
    /^k(\/k){63} nests deeper than 64 levels/,
    65,
  ],
  [
    'an alias chain',
    'a0: &a0 [1]\n' + Array.from({ length: 1999 }, (_, i) => `a${i + 1}: &a${i + 1} [*a${i}]\n`).join(''),
    /^alias \*a\d+ nests deeper than 64 levels/,
    0,
  ],
  ['an alias inside its own anchor', 'a: &a\n  b: *a\n', /^alias \*a nests deeper than 64 levels/, 2],
];

for (const [shape, text, message, line] of yamlCases)
  test(`a data file nested past 64 levels through ${shape} is a positioned error, not a crash`, (t) => {
    const error = t.throws(() => parseYaml(text), { instanceOf: YamlSyntaxError })!;
    t.regex(error.message, message);
    t.true(error.nesting);
    if (line > 0) t.is(error.line, line);
    else t.true((error.line ?? 0) > 1);
    // the other readers (Traefik's static config, the settings file) refuse it as YAML
    t.throws(() => parseYamlValue(text), { instanceOf: YAMLError });
    t.true(parseYamlDocument(text).errors.length > 0);
  });

test('a data file of exactly 64 levels is read; a pair in a sequence counts as the object it becomes', (t) => {
  const ok = parseYaml('x: ' + '['.repeat(63) + '1' + ']'.repeat(63) + '\n');
  t.is(nestingPathOf(ok.value), null);
  // 40 `[a: …]` levels are 40 tokens deep but 81 levels as JavaScript (array, one-key object, …)
  const pairs = t.throws(() => parseYaml('x: ' + '[a: '.repeat(40) + '1' + ']'.repeat(40) + '\n'), {
    instanceOf: YamlSyntaxError,
  })!;
  t.regex(pairs.message, /^x(\/0\/a){31}\/0 nests deeper than 64 levels/);
  t.is(pairs.line, 1);
});

test('loneSurrogateAt: the path of the first value or key with a lone surrogate; pairs and plain text pass', (t) => {
  t.is(loneSurrogateAt({ a: ['x', 'ok \ud83e\udde8', { b: 'y\ud800' }] }), '/a/2/b');
  t.is(loneSurrogateAt({ a: { 'k\udfff': 1 } }), '/a/k\udfff');
  t.is(loneSurrogateAt('\udc00'), '');
  t.is(loneSurrogateAt({ a: ['x', { b: 'ok \ud83e\udde8' }], n: 1, z: null }), null);
});
