/**
 * Values Traefik cannot build are refused by our API (issue 25 item 4: "everything Traefik refuses
 * or misreads is a bug of ours"). Before, POST /api/middlewares answered 201 for each of them and
 * Traefik 3.7.15 disabled the middleware and every router using it (the resource answered 404).
 *
 * Before: each value is served to the real Traefik as an upstream middleware of the Pangolin
 * document, which Stack Manager passes through unchanged into the same HTTP provider document its
 * own middlewares go to; Traefik's verbatim error and the 404 are asserted. After: the same type and
 * config through our API → 422 `validation_failed` naming the field; a hand-edited file holding one
 * is an invalid file that never reaches Traefik. Values next to them that Traefik builds stay
 * accepted and load.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  addResources,
  assertEnabled,
  assign,
  createMiddleware,
  routerOf,
  waitForLoaded,
} from './middlewares-support.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startStack(hook.context(t));
});

/** One value class: a config Traefik cannot build, the field our API names, Traefik's error (a part of it). */
interface Case {
  name: string;
  type: string;
  config: Record<string, unknown>;
  pointer: string;
  traefik: string;
}

const CASES: Case[] = [
  {
    name: 'cidr',
    type: 'ipAllowList',
    config: { sourceRange: ['10.0.0.0/33'] },
    pointer: '/config/sourceRange/0',
    traefik: 'cannot parse CIDRs [10.0.0.0/33]: parsing CIDR trusted IPs <nil>: invalid CIDR address: 10.0.0.0/33',
  },
  {
    name: 'zone',
    type: 'ipWhiteList',
    config: { sourceRange: ['fe80::1%eth0'] },
    pointer: '/config/sourceRange/0',
    traefik: 'invalid CIDR address: fe80::1%eth0',
  },
  {
    name: 'no-range',
    type: 'ipAllowList',
    config: { ipStrategy: { depth: 1 } },
    pointer: '/config/sourceRange',
    traefik: 'sourceRange is empty, IPAllowLister not created',
  },
  {
    name: 'reject-code',
    type: 'ipAllowList',
    config: { sourceRange: ['10.0.0.0/8'], rejectStatusCode: 599 },
    pointer: '/config/rejectStatusCode',
    traefik: 'invalid HTTP status code 599',
  },
  {
    name: 'excluded',
    type: 'rateLimit',
    config: { average: 5, sourceCriterion: { ipStrategy: { excludedIPs: ['gateway'] } } },
    pointer: '/config/sourceCriterion/ipStrategy/excludedIPs/0',
    traefik: 'invalid CIDR address: gateway',
  },
  {
    name: 'exclusive',
    type: 'inFlightReq',
    config: { amount: 5, sourceCriterion: { requestHeaderName: 'X-User', ipStrategy: { depth: 1 } } },
    pointer: '/config/sourceCriterion',
    traefik: 'iPStrategy and RequestHeaderName are mutually exclusive',
  },
  {
    name: 'period',
    type: 'rateLimit',
    config: { average: 5, period: '-1s' },
    pointer: '/config/period',
    traefik: 'negative value not valid for period: -1s',
  },
  {
    name: 'status',
    type: 'errors',
    config: { status: ['500 - 599'], service: '1-app-service', query: '/' },
    pointer: '/config/status/0',
    traefik: 'strconv.Atoi: parsing "500 ": invalid syntax',
  },
  {
    name: 'lookahead',
    type: 'redirectRegex',
    config: { regex: '^https://(?!www\\.)(.*)', replacement: 'https://www.$1' },
    pointer: '/config/regex',
    traefik: 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`',
  },
  {
    name: 'backreference',
    type: 'replacePathRegex',
    config: { regex: '^/(a+)/\\1', replacement: '/$1' },
    pointer: '/config/regex',
    traefik: 'error parsing regexp: invalid escape sequence: `\\1`',
  },
  {
    name: 'lookbehind',
    type: 'stripPrefixRegex',
    config: { regex: ['^/(?<=api)'] },
    pointer: '/config/regex/0',
    traefik: 'error parsing regexp: invalid named capture: `(?<=api)`',
  },
  {
    name: 'origin-regex',
    type: 'headers',
    config: { accessControlAllowOriginListRegex: ['^https://(?=app)'] },
    pointer: '/config/accessControlAllowOriginListRegex/0',
    traefik: 'invalid or unsupported Perl syntax: `(?=`',
  },
  {
    name: 'auth-regex',
    type: 'forwardAuth',
    config: { address: 'http://127.0.0.1:9/auth', authResponseHeadersRegex: '^X-(?i:user\\Z)' },
    pointer: '/config/authResponseHeadersRegex',
    traefik: 'invalid escape sequence: `\\Z`',
  },
  {
    name: 'encoding',
    type: 'compress',
    config: { encodings: ['gzip'], defaultEncoding: 'br' },
    pointer: '/config/defaultEncoding',
    traefik: 'unsupported default encoding: br',
  },
  {
    name: 'buffer',
    type: 'buffering',
    config: { maxRequestBodyBytes: -1 },
    pointer: '/config/maxRequestBodyBytes',
    traefik: 'max bytes should be >= 0 got -1',
  },
  {
    name: 'retry-syntax',
    type: 'buffering',
    config: { retryExpression: 'Attempts( < 2' },
    pointer: '/config/retryExpression',
    traefik: "1:11: expected operand, found '<'",
  },
  {
    name: 'retry-type',
    type: 'buffering',
    config: { retryExpression: 'IsNetworkError() || Attempts() < 2.5' },
    pointer: '/config/retryExpression',
    traefik: 'expected int, got float64',
  },
  {
    name: 'attempts',
    type: 'retry',
    config: { attempts: 0 },
    pointer: '/config/attempts',
    traefik: 'incorrect (or empty) value for attempt (0)',
  },
  {
    name: 'breaker',
    type: 'circuitBreaker',
    config: { expression: 'LatencyAtQuantileMS(50) > 100' },
    pointer: '/config/expression',
    traefik: 'reflect: Call using int as type float64',
  },
  {
    name: 'prefix',
    type: 'addPrefix',
    config: { prefix: '' },
    pointer: '/config/prefix',
    traefik: 'prefix cannot be empty',
  },
  {
    name: 'scheme',
    type: 'redirectScheme',
    config: { permanent: true },
    pointer: '/config/scheme',
    traefik: 'you must provide a target scheme',
  },
  {
    name: 'basic-user',
    type: 'basicAuth',
    config: { users: ['alice'] },
    pointer: '/config/users/0',
    traefik: 'error parsing BasicUser: alice',
  },
  {
    name: 'digest-user',
    type: 'digestAuth',
    config: { users: ['alice:0123'] },
    pointer: '/config/users/0',
    traefik: 'error parsing DigestUser: alice:0123',
  },
];

e2e(
  'before: Traefik disables each value and its router (404); after: our API answers 422 naming the field',
  async (t) => {
    const resources = CASES.map((c, i) => ({ id: 10 + i, name: `bad-${c.name}`, host: `bad-${c.name}.test` }));
    const document = stack.pangolin.document as any;
    for (const c of CASES) document.http.middlewares[`bad-${c.name}`] = { [c.type]: c.config };
    await addResources(stack, resources);
    // each resource's router uses its value as an upstream middleware, before badger
    for (const [i, c] of CASES.entries())
      document.http.routers[routerOf(resources[i])].middlewares.unshift(`bad-${c.name}`);

    const before = await Promise.all(
      CASES.map(async (c, i) => {
        const loaded = await waitForLoaded(stack.traefik, routerOf(resources[i]), [`bad-${c.name}`, 'badger']);
        const reply = await stack.traefik.request({ entryPoint: 'websecure', host: resources[i].host });
        return { middleware: loaded.middlewares[0], router: loaded.router, status: reply.status };
      }),
    );
    for (const [i, c] of CASES.entries()) {
      const { middleware, router, status } = before[i];
      t.log(`${c.type} ${JSON.stringify(c.config)} → Traefik: ${JSON.stringify(middleware.error)}`);
      t.is(middleware.status, 'disabled', c.name);
      t.true(
        (middleware.error ?? []).some((e: string) => e.includes(c.traefik)),
        `${c.name}: ${JSON.stringify(middleware.error)}`,
      );
      t.is(router.status, 'disabled', c.name);
      t.is(status, 404, c.name);
    }

    for (const c of CASES) {
      const reply = await stack.sm.call('POST', '/api/middlewares', {
        id: `ours-${c.name}`,
        name: c.name,
        type: c.type,
        config: c.config,
      });
      t.is(reply.status, 422, `${c.name}: ${reply.text}`);
      const json = reply.json as { id: string; details: Array<{ path: string; message: string }> };
      t.is(json.id, 'validation_failed');
      const detail = json.details.find((d) => d.path === c.pointer);
      t.truthy(detail, `${c.name}: ${reply.text}`);
      t.log(`${c.name} → 422 ${c.pointer} ${detail?.message}`);
      t.is((await stack.sm.call('GET', `/api/middlewares/ours-${c.name}`)).status, 404, `${c.name} stored`);
    }
  },
);

e2e('a hand-edited file holding such a value never reaches Traefik', async (t) => {
  const dir = path.join(stack.sm.dataDir, 'middlewares');
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'hand-cidr.yaml'),
    'name: Hand\ntype: ipAllowList\nconfig:\n  sourceRange:\n    - 10.99.0.0/33\n',
  );
  const invalid = await waitFor(async () => {
    const status = (await stack.sm.call('GET', '/api/proxy-config/status')).json as any;
    return status.invalid_files.find((file: { path: string }) => file.path.endsWith('hand-cidr.yaml')) ?? null;
  }, 1_000);
  t.regex(JSON.stringify(invalid), /sourceRange/);
  const document = await stack.sm.call('GET', '/api/proxy-config');
  t.false(document.text.includes('10.99.0.0/33'), document.text.slice(0, 500));
  t.is(await stack.traefik.api('/api/http/middlewares/hand-cidr@http').catch(() => null), null);
  t.false(stack.traefik.log().includes('10.99.0.0/33'));
});

e2e('values next to the refused ones that Traefik builds are accepted and load', async (t) => {
  const accepted: Array<[string, Record<string, unknown>]> = [
    [
      'ipAllowList',
      {
        sourceRange: ['127.0.0.1/24', '::ffff:127.0.0.1/120', '10.0.0.0/08'],
        ipStrategy: { depth: -1 },
        rejectStatusCode: 404,
      },
    ],
    ['ipWhiteList', { sourceRange: ['127.0.0.1'], ipStrategy: { depth: 1, excludedIPs: ['ignored-with-depth'] } }],
    ['rateLimit', { average: 100, period: 0, sourceCriterion: { requestHeaderName: 'X-User' } }],
    [
      'errors',
      { status: ['599-500', '+502'], statusRewrites: { '500-599': 502 }, service: '1-app-service', query: '/' },
    ],
    ['redirectRegex', { regex: '^https://(?P<host>nowhere)\\.(?i:TEST)/(.*)', replacement: 'https://${host}/$2' }],
    ['compress', { encodings: ['zstd', 'gzip'], defaultEncoding: 'zstd', minResponseBodyBytes: -1 }],
    ['basicAuth', { users: ['alice:'] }],
    ['circuitBreaker', { expression: 'NetworkErrorRatio() > .5 || LatencyAtQuantileMS(50.0) > 100' }],
    ['buffering', { retryExpression: 'RequestMethod() == "GET" &&\n(ResponseCode() == 502 || Attempts() <= 2)' }],
  ];
  const ids = accepted.map(([type], i) => `edge-${i}-${type.toLowerCase()}`);
  for (const [i, [type, config]] of accepted.entries()) await createMiddleware(stack, { id: ids[i], type, config });
  const resources = ids.map((id, i) => ({ id: 100 + i, name: id, host: `${id}.test` }));
  await addResources(stack, resources);
  await Promise.all(resources.map((resource, i) => assign(stack, routerOf(resource), ids[i])));
  const loaded = await Promise.all(
    resources.map((resource, i) => waitForLoaded(stack.traefik, routerOf(resource), [ids[i], 'badger'])),
  );
  for (const each of loaded) assertEnabled(t, each);
});

e2e(
  'a server URL Go cannot parse: before, Traefik disables the service and its router (404); after, 422',
  async (t) => {
    const resource = { id: 200, name: 'bad-url', host: 'bad-url.test' };
    await addResources(stack, [resource]);
    const service = `${resource.id}-${resource.name}-service`;
    const document = stack.pangolin.document as any;
    document.http.services[service].loadBalancer.servers = [{ url: '127.0.0.1:80' }];
    const error = await waitFor(async () => {
      const found = await stack.traefik.api(`/api/http/services/${service}@http`).catch(() => null);
      return found?.error?.length > 0 ? found.error : null;
    }, 5_000);
    t.log(`Traefik: ${JSON.stringify(error)}`);
    t.true(error.some((e: string) => e.includes('first path segment in URL cannot contain colon')));
    const router = await stack.traefik.api(`/api/http/routers/${routerOf(resource)}@http`);
    t.is(router.status, 'disabled');
    t.is((await stack.traefik.request({ entryPoint: 'websecure', host: resource.host })).status, 404);

    const reply = await stack.sm.call('POST', '/api/services', {
      id: 'ours-bad-url',
      name: 'ours-bad-url',
      type: 'loadBalancer',
      config: { servers: [{ url: '127.0.0.1:80' }] },
    });
    t.is(reply.status, 422, reply.text);
    const detail = (reply.json as any).details[0];
    t.log(`→ 422 ${detail.path} ${detail.message}`);
    t.is(detail.path, '/config/servers/0/url');
  },
);

e2e(
  'a TCP rule Traefik cannot build: before, Traefik disables the TCP router; after, PUT config/tcp answers 422',
  async (t) => {
    const rules = ['HostSNI(`a b.test`)', 'Host(`app.test`)', 'HostSNI(`app.test`) && ClientIP(`10.0.0.0/33`)'];
    const document = stack.pangolin.document as any;
    document.tcp = {
      routers: Object.fromEntries(
        rules.map((rule, i) => [
          `bad-rule-${i}`,
          { entryPoints: ['websecure'], rule, service: `bad-rule-service`, tls: { passthrough: true } },
        ]),
      ),
      services: { 'bad-rule-service': { loadBalancer: { servers: [{ address: '127.0.0.1:9' }] } } },
    };
    const routers = await stack.traefik.waitForRouters(
      rules.map((_, i) => `bad-rule-${i}@http`),
      'tcp',
    );
    for (const [i, router] of routers.entries()) {
      t.log(`${rules[i]} → Traefik: ${JSON.stringify(router.error)}`);
      t.is(router.status, 'disabled');
      t.true((router.error ?? []).length > 0);
    }
    for (const rule of rules) {
      const reply = await stack.sm.call('PUT', `/api/resources/${routerOf({ id: 1, name: 'app' })}/config/tcp`, {
        enabled: true,
        sni_rule: rule,
      });
      t.is(reply.status, 422, reply.text);
      const detail = (reply.json as any).details[0];
      t.is(detail.path, '/sni_rule');
      t.log(`${rule} → 422 ${detail.path} ${detail.message}`);
    }
    delete document.tcp;
  },
);
