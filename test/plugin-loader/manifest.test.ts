/** Manifest and prefix rules of API.md §6, unit level. */
import test from 'ava';
import { checkManifest } from '../../core/plugin-loader/manifest.ts';
import { prefixesOverlap, prefixProblem as prefixProblemIn, reservedNames } from '../../core/plugin-loader/prefixes.ts';
import { builtinGroups } from '../../plugins/index.ts';

const reserved = reservedNames(builtinGroups.map((group) => group.name));
const prefixProblem = (prefix: string) => prefixProblemIn(prefix, reserved);

const base = { name: 'hello', version: '1.0.0', api_version: '^1.0.0', entry: 'index.mjs' };

test('a complete manifest passes', (t) => {
  t.is(
    checkManifest(
      { ...base, dependencies: ['health', 'other'], prefix: '/api/tools/hello', description: 'x' },
      reserved,
    ),
    undefined,
  );
});

test('manifest rules name the field that breaks them', (t) => {
  const cases: [Partial<typeof base> & { dependencies?: string[]; prefix?: string }, RegExp][] = [
    [{ name: 'Hello' }, /name "Hello" must be a slug/],
    [{ name: 'ext' }, /name "ext" is reserved/],
    [{ name: 'proxy-config' }, /reserved/],
    [{ version: '1.0' }, /version "1.0" is not a semantic version/],
    [{ api_version: 'one' }, /api_version "one" is not a satisfiable semver range/],
    [{ api_version: '>2.0.0 <1.0.0' }, /not a satisfiable/],
    [{ dependencies: ['hello'] }, /cannot depend on itself/],
    [{ dependencies: ['Bad Name'] }, /dependency "Bad Name" is not a valid name/],
    [{ prefix: '/ext/hello' }, /must start with \/api\//],
  ];
  for (const [change, message] of cases)
    t.regex(checkManifest({ ...base, ...change }, reserved) ?? '', message, JSON.stringify(change));
});

test('prefixes must be well-formed and stay out of built-in prefixes', (t) => {
  for (const ok of ['/api/ext/hello', '/api/ext/hello/v2', '/api/tools', '/api/proxy-configs', '/api/healthz'])
    t.is(prefixProblem(ok), undefined, ok);
  const bad: [string, RegExp][] = [
    ['/api/ext', /reserved/],
    ['/api/openapi.json', /reserved/],
    ['/api/health', /built-in prefix \/api\/health/],
    ['/api/proxy/extra', /built-in prefix \/api\/proxy$/],
    ['/api/proxy-config', /built-in prefix \/api\/proxy-config/],
    ['/api/v1/traefik-config', /built-in prefix \/api\/v1/],
    ['/api/ext/hello/', /lower-case path segments/],
    ['/api/ext/:id', /lower-case path segments/],
    ['/api/ext/*', /lower-case path segments/],
    ['/api/ext/../auth', /lower-case path segments|\.\. segments/],
    ['/api/Ext/hello', /lower-case path segments/],
    ['api/ext/hello', /must start with \/api\//],
  ];
  for (const [prefix, message] of bad) t.regex(prefixProblem(prefix) ?? '', message, prefix);
});

test('prefixes overlap when equal or one lies under the other by whole segments', (t) => {
  t.true(prefixesOverlap('/api/ext/a', '/api/ext/a'));
  t.true(prefixesOverlap('/api/ext/a/b', '/api/ext/a'));
  t.true(prefixesOverlap('/api/ext/a', '/api/ext/a/b'));
  t.false(prefixesOverlap('/api/ext/a', '/api/ext/ab'));
});
