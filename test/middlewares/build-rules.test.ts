/**
 * Values Traefik 3.7.15's middleware constructors refuse (it then disables the middleware and every
 * router using it): refused with 422 at the field, and the same for hand-edited files. Each case
 * below was measured against the binary (refused: its error; accepted: built without error).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { goIpOrCidr } from '../../model/go-ip.ts';
import { goRegexpError } from '../../model/go-regexp.ts';
import { circuitBreakerError } from '../../plugins/middlewares/circuit-breaker.ts';
import { waitFor } from '../helpers/wait.ts';
import { assertClientError, buildApp, call } from './support.ts';

const post = (app: Awaited<ReturnType<typeof buildApp>>, payload: object) =>
  call(app, { method: 'POST', url: '/api/middlewares', payload });

test('IP and CIDR entries as Go parses them', (t) => {
  for (const ok of ['10.0.0.1', '10.0.0.1/24', '::1', 'fe80::/10', '::ffff:10.0.0.1/120', '10.0.0.0/08', ' 10.0.0.1'])
    t.true(goIpOrCidr(ok), ok);
  for (const bad of ['10.0.0.0/33', 'not-an-ip', '', '010.0.0.1', 'fe80::1%eth0', '10.0.0.0/8/8', '2001:db8::/129'])
    t.false(goIpOrCidr(bad), bad);
});

test('regular expressions: Go RE2 errors, Go-only syntax accepted', (t) => {
  const refused: Array<[string, string]> = [
    ['^/(?=a)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['^/(?!a)', 'invalid or unsupported Perl syntax: `(?!`'],
    ['^/(?<=a)', 'invalid named capture: `(?<=a)`'],
    ['(?>a)', 'invalid or unsupported Perl syntax: `(?>`'],
    ['^/(a)\\1', 'invalid escape sequence: `\\1`'],
    ['(?<n>a)\\k<n>', 'invalid escape sequence: `\\k`'],
    ['\\u0041', 'invalid escape sequence: `\\u`'],
    ['a\\Z', 'invalid escape sequence: `\\Z`'],
    ['^/(a', 'missing closing ): `^/(a`'],
    ['a)', 'unexpected ): `a)`'],
    ['[a', 'missing closing ]: `[a`'],
    ['[z-a]', 'invalid character class range: `z-a`'],
    ['[[:foo:]]', 'invalid character class range: `[:foo:]`'],
    ['\\p{Foo}', 'invalid character class range: `\\p{Foo}`'],
    ['a**', 'invalid nested repetition operator: `**`'],
    ['a{2}{3}', 'invalid nested repetition operator: `{2}{3}`'],
    ['*a', 'missing argument to repetition operator: `*`'],
    ['a{1001}', 'invalid repeat count: `{1001}`'],
    ['(?x)a', 'invalid or unsupported Perl syntax: `(?x`'],
    ['(?-)', 'invalid or unsupported Perl syntax: `(?-)`'],
    ['\\x4G', 'invalid escape sequence: `\\x4G`'],
    ['a\\', 'trailing backslash at end of expression: ``'],
  ];
  for (const [pattern, error] of refused) t.is(goRegexpError(pattern), error, pattern);
  for (const pattern of [
    '',
    '^/api/(.*)',
    '(?i)^/A',
    '^/(?P<x>a)(?<y>b)',
    '\\d{2,3}[[:alpha:]][[:^space:]]\\pL\\p{Greek}\\x41\\x{41}\\Q.*\\E',
    'a{,2}x{',
    'a*?b+?',
    '(a*)*',
    '[]a]',
    '[\\d-z]',
    '(?i-s:a)(?)',
    '\\/\\-\\_',
    '\\0\\12',
  ])
    t.is(goRegexpError(pattern), null, pattern);
});

test('circuitBreaker expressions: the function, argument and comparison types Traefik 3.7.15 builds', (t) => {
  for (const expression of [
    'NetworkErrorRatio() > 0.5',
    'NetworkErrorRatio ( ) > .5 || ResponseCodeRatio(500, 600, 0, 600) > 1e-1',
    'NetworkErrorRatio() > 0.5 || NetworkErrorRatio() > 0.1 && (LatencyAtQuantileMS(50.) > 100)',
    'LatencyAtQuantileMS(5e1) != 100\n',
  ])
    t.is(circuitBreakerError(expression), null, expression);
  for (const expression of [
    'LatencyAtQuantileMS(50) > 100', // reflect: Call using int as type float64
    'LatencyAtQuantileMS(50.0) > 1.5', // expected int, got float64
    'NetworkErrorRatio() > 1', // expected int, got int
    'networkerrorratio() > 0.5', // unsupported function: networkerrorratio
    'ResponseCodeRatio(500, 600) > 0.5', // reflect: Call with too few input arguments
    'NetworkErrorRatio()', // expected predicate, got cbreaker.toFloat64
    '0.5 < NetworkErrorRatio()', // lt: unsupported argument: float64
    '!(NetworkErrorRatio() > 0.5)', // ! is not supported
    'NetworkErrorRatio() > 0.5 and LatencyAtQuantileMS(50.0) > 100', // expected 'EOF', found and
    'NetworkErrorRatio() > 0x1', // strconv.Atoi: parsing "0x1"
  ])
    t.truthy(circuitBreakerError(expression), expression);
});

const REFUSED: Array<[string, Record<string, unknown>, string]> = [
  ['ipAllowList', { sourceRange: ['10.0.0.0/33'] }, '/config/sourceRange/0'],
  ['ipAllowList', { sourceRange: ['10.0.0.1', 'fe80::1%eth0'] }, '/config/sourceRange/1'],
  ['ipAllowList', { ipStrategy: { depth: 1 } }, '/config/sourceRange'],
  ['ipAllowList', { sourceRange: [] }, '/config/sourceRange'],
  ['ipWhiteList', { sourceRange: ['nope'] }, '/config/sourceRange/0'],
  [
    'ipAllowList',
    { sourceRange: ['10.0.0.0/8'], ipStrategy: { excludedIPs: ['nope'] } },
    '/config/ipStrategy/excludedIPs/0',
  ],
  ['ipAllowList', { sourceRange: ['10.0.0.0/8'], rejectStatusCode: 599 }, '/config/rejectStatusCode'],
  [
    'rateLimit',
    { average: 5, sourceCriterion: { ipStrategy: { excludedIPs: ['x'] } } },
    '/config/sourceCriterion/ipStrategy/excludedIPs/0',
  ],
  [
    'rateLimit',
    { average: 5, sourceCriterion: { requestHeaderName: 'X', ipStrategy: { depth: 1 } } },
    '/config/sourceCriterion',
  ],
  ['rateLimit', { average: 5, period: '-1s' }, '/config/period'],
  [
    'inFlightReq',
    { amount: 5, sourceCriterion: { ipStrategy: { excludedIPs: ['x'] } } },
    '/config/sourceCriterion/ipStrategy/excludedIPs/0',
  ],
  ['errors', { status: ['abc'], service: 's@file', query: '/' }, '/config/status/0'],
  ['errors', { status: ['500 - 599'], service: 's@file', query: '/' }, '/config/status/0'],
  ['redirectRegex', { regex: '^/(?=a)', replacement: '/b' }, '/config/regex'],
  ['replacePathRegex', { regex: '^/(?!a)', replacement: '/b' }, '/config/regex'],
  ['stripPrefixRegex', { regex: ['^/ok', '^/(?<=a)'] }, '/config/regex/1'],
  ['headers', { accessControlAllowOriginListRegex: ['^https://(?!x)'] }, '/config/accessControlAllowOriginListRegex/0'],
  ['forwardAuth', { address: 'http://auth', authResponseHeadersRegex: '^(?=X)' }, '/config/authResponseHeadersRegex'],
  ['compress', { encodings: ['identity'] }, '/config/encodings/0'],
  ['compress', { encodings: ['gzip'], defaultEncoding: 'br' }, '/config/defaultEncoding'],
  ['buffering', { maxRequestBodyBytes: -1 }, '/config/maxRequestBodyBytes'],
  ['retry', { attempts: 0 }, '/config/attempts'],
  ['circuitBreaker', { expression: 'LatencyAtQuantileMS(50) > 100' }, '/config/expression'],
  ['addPrefix', { prefix: '' }, '/config/prefix'],
  ['redirectScheme', { permanent: true }, '/config/scheme'],
  ['basicAuth', { users: ['nocolon'] }, '/config/users/0'],
  ['digestAuth', { users: ['a:b'] }, '/config/users/0'],
];

/** Values Traefik 3.7.15 builds without error next to the refused ones: they must stay accepted. */
const ACCEPTED: Array<[string, Record<string, unknown>]> = [
  ['ipAllowList', { sourceRange: ['10.0.0.1/24', '::ffff:10.0.0.1/120', 'fe80::/10'], rejectStatusCode: 404 }],
  ['ipAllowList', { sourceRange: ['10.0.0.0/8'], ipStrategy: { depth: 1, excludedIPs: ['ignored-with-depth'] } }],
  ['ipAllowList', { sourceRange: ['10.0.0.0/8'], ipStrategy: { depth: -1 }, rejectStatusCode: 0 }],
  ['rateLimit', { average: 5, period: 0, sourceCriterion: { requestHeaderName: 'X' } }],
  ['inFlightReq', { amount: 0 }],
  [
    'errors',
    {
      status: ['500-599', '404', '599-500', '+502'],
      statusRewrites: { '500-599': 200 },
      service: 's@file',
      query: '/',
    },
  ],
  ['redirectRegex', { regex: '^/(?P<x>a)(?i)b', replacement: '/b' }],
  ['compress', { encodings: ['zstd', 'br', 'gzip'], defaultEncoding: 'zstd', minResponseBodyBytes: -1 }],
  ['compress', { defaultEncoding: 'zstd' }],
  ['basicAuth', { users: ['a:'] }],
  ['digestAuth', { users: ['a:realm:0123'] }],
  ['redirectScheme', { scheme: 'https', port: 'abc' }],
  ['circuitBreaker', { expression: 'NetworkErrorRatio() > 0.5 || LatencyAtQuantileMS(50.0) > 100' }],
];

test('the API refuses each value Traefik cannot build, naming the field, and keeps what Traefik builds', async (t) => {
  const app = await buildApp(t);
  for (const [type, config, pointer] of REFUSED) {
    const reply = await post(app, { name: 'n', type, config });
    assertClientError(t, reply, 422, 'validation_failed');
    t.true(
      reply.body.details.some((d: { path: string }) => d.path === pointer),
      `${type} ${JSON.stringify(config)}: ${JSON.stringify(reply.body)}`,
    );
  }
  for (const [i, [type, config]] of ACCEPTED.entries()) {
    const reply = await post(app, { name: `ok${i}`, type, config });
    t.is(reply.status, 201, `${type} ${JSON.stringify(config)}: ${JSON.stringify(reply.body)}`);
  }
  // PUT too: a stored middleware cannot be changed into one Traefik refuses
  const put = await call(app, {
    method: 'PUT',
    url: '/api/middlewares/ok0',
    payload: { name: 'ok0', type: 'ipAllowList', config: { sourceRange: ['10.0.0.0/33'] } },
  });
  assertClientError(t, put, 422, 'validation_failed');
  t.is(put.body.details[0].path, '/config/sourceRange/0');
});

test('a hand-edited file holding such a value is an invalid file, not loaded', async (t) => {
  const app = await buildApp(t);
  const dir = path.join(app.store.dataDir, 'middlewares');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'allow.yaml');
  await writeFile(file, 'name: Allow\ntype: ipAllowList\nconfig:\n  sourceRange:\n    - 10.0.0.0/33\n');
  const invalid = await waitFor(() => app.store.invalidFiles().find((f) => f.path === file) ?? null, 1_000);
  t.regex(invalid.message, /sourceRange\/0.*IP address or a CIDR range/);
  t.is((await call(app, { method: 'GET', url: '/api/middlewares/allow' })).status, 404);
  await writeFile(file, 'name: Allow\ntype: ipAllowList\nconfig:\n  sourceRange:\n    - 10.0.0.0/32\n');
  await waitFor(async () => (await call(app, { method: 'GET', url: '/api/middlewares/allow' })).status === 200, 1_000);
});
