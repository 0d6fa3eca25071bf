import test from 'ava';
import { readFileSync } from 'node:fs';
import { parseLossless, stringifyCanonical } from '../../model/lossless-json.ts';
import { generateConfig } from '../../model/generate/generate.ts';
import { serializeJson, serializeYaml, etagOf } from '../../plugins/proxy-config/serialize.ts';
import type { Middleware, Service } from '../../model/types.ts';
import { fixture } from '../helpers/shared.ts';
import {
  WORKED_UPSTREAM,
  appV2,
  authelia,
  entry,
  loadFixture,
  pangolinInput,
  rateLimit,
  resource,
  router,
  schemaWarnings,
  workedResource,
} from './inputs.ts';

// API.md §4.9, the bytes of the worked example (the wrapped lines joined, plus "\n")
const WORKED_BODY =
  '{"http":{"middlewares":{"1-app-router_headers":{"headers":{"customRequestHeaders":{"X-Forwarded-Proto":"https"}}},' +
  '"authelia":{"forwardAuth":{"address":"http://authelia:9091/api/authz/forward-auth","authResponseHeaders":["Remote-User","Remote-Groups"],"trustForwardHeader":true}},' +
  '"badger":{"plugin":{"badger":{"apiBaseUrl":"http://pangolin:3001/api/v1","resourceSessionRequestParam":"resource_session_request_param","userSessionCookieName":"p_session_token"}}},' +
  '"rate-limit":{"rateLimit":{"average":100,"burst":50}},"redirect-to-https":{"redirectScheme":{"scheme":"https"}}},' +
  '"routers":{"1-app-router":{"entryPoints":["websecure"],"middlewares":["1-app-router_headers","authelia","crowdsec@file","rate-limit","badger"],"priority":500,"rule":"Host(`app.example.com`)","service":"app-v2","tls":{"certResolver":"letsencrypt"}},' +
  '"1-app-router-redirect":{"entryPoints":["web"],"middlewares":["redirect-to-https"],"rule":"Host(`app.example.com`)","service":"1-app-service"}},' +
  '"services":{"1-app-service":{"loadBalancer":{"servers":[{"url":"http://100.89.128.4:57920"}]}},"app-v2":{"loadBalancer":{"servers":[{"url":"http://10.0.0.7:8080"}]}}}}}' +
  '\n';

const workedInput = () =>
  pangolinInput(parseLossless(WORKED_UPSTREAM), {
    middlewares: [authelia, rateLimit],
    services: [appV2],
    resources: [workedResource()],
  });

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** The same JSON tree with every object's keys inserted in reverse order (arrays untouched). */
function reverseKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reverseKeys) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reverseKeys(v)]),
  ) as T;
}

test('the API.md worked example produces exactly the documented bytes', (t) => {
  const result = generateConfig(workedInput());
  t.is(serializeJson(result.config).toString('utf8'), WORKED_BODY);
  t.deepEqual(result.resources['1-app-router'], {
    effective_middlewares: ['1-app-router_headers', 'authelia', 'crowdsec@file', 'rate-limit', 'badger'],
    effective_service: 'app-v2',
    emitted: true,
    warnings: [],
  });
  t.deepEqual(result.conflicts, []);
  t.deepEqual(result.dangling_references, []);
  t.deepEqual(result.counts, { routers: 2, services: 2, middlewares: 5, patched_routers: 1 });
  t.deepEqual(schemaWarnings(result.config), []);
});

test('the worked example gives the same bytes and ETag on every generation', (t) => {
  const first = serializeJson(generateConfig(workedInput()).config);
  const second = serializeJson(generateConfig(workedInput()).config);
  t.true(first.equals(second));
  t.is(etagOf(first), etagOf(second));
  t.true(
    serializeYaml(generateConfig(workedInput()).config).equals(serializeYaml(generateConfig(workedInput()).config)),
  );
});

test('the Pangolin fixture stack passes through unchanged apart from key order', (t) => {
  const text = readFileSync(fixture('pangolin', 'traefik-config.json'), 'utf8');
  const upstream = parseLossless(text);
  const result = generateConfig(pangolinInput(upstream));
  t.deepEqual(result.config, upstream);
  // independent canonical form: plain JSON.parse (no unsafe integers in this file) + sorting replacer
  const sorted = JSON.stringify(JSON.parse(text), (_key, value) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  t.is(serializeJson(result.config).toString('utf8'), sorted + '\n');
  t.true(serializeJson(generateConfig(pangolinInput(parseLossless(text))).config).equals(serializeJson(result.config)));
  t.deepEqual(result.counts, { routers: 10, services: 7, middlewares: 6, patched_routers: 0 });
  t.deepEqual(schemaWarnings(result.config), []);
});

test('patching one fixture router keeps every other section, key and router field', (t) => {
  const upstream = loadFixture('pangolin', 'traefik-config.json') as Record<string, any>;
  const jellyfin = resource('6-jellyfin-media-router', {
    router: '6-Jellyfin-Media-router@http',
    name: '6-Jellyfin-Media-router',
    upstream_service: '6-Jellyfin-Media-service',
    upstream_middlewares: ['badger', '6-headers-middleware'],
    middlewares: [{ id: 'authelia', priority: 100 }],
  });
  const result = generateConfig(pangolinInput(upstream, { middlewares: [authelia], resources: [jellyfin] }));
  const config = result.config as Record<string, any>;
  t.deepEqual(router(config, '6-Jellyfin-Media-router').middlewares, ['authelia', 'badger', '6-headers-middleware']);
  // everything else is the upstream, untouched
  const expected = structuredClone(upstream);
  expected.http.routers['6-Jellyfin-Media-router'].middlewares = ['authelia', 'badger', '6-headers-middleware'];
  expected.http.middlewares.authelia = { forwardAuth: authelia.config };
  t.deepEqual(config, expected);
  t.deepEqual(schemaWarnings(config), []);
});

test('an id of ours equal to an upstream key is skipped and listed as a conflict', (t) => {
  const upstream = parseLossless(WORKED_UPSTREAM);
  const badger: Middleware = { id: 'badger', name: 'Badger mine', type: 'rateLimit', config: { average: 1 } };
  const service: Service = { ...appV2, id: '1-app-service', name: 'Clash' };
  const result = generateConfig(pangolinInput(upstream, { middlewares: [badger, authelia], services: [service] }));
  const config = result.config as Record<string, any>;
  t.deepEqual(entry(config, 'http', 'middlewares', 'badger'), (upstream as any).http.middlewares.badger);
  t.deepEqual(entry(config, 'http', 'services', '1-app-service'), (upstream as any).http.services['1-app-service']);
  t.truthy(entry(config, 'http', 'middlewares', 'authelia'));
  t.deepEqual(
    result.conflicts.map((c) => [c.kind, c.key]),
    [
      ['middleware', 'badger'],
      ['service', '1-app-service'],
    ],
  );
  t.regex(result.conflicts[0].message, /http\.middlewares\.badger/);
});

test('references to missing objects are skipped and listed as dangling', (t) => {
  const chain: Middleware = {
    id: 'secure',
    name: 'Secure',
    type: 'chain',
    config: { middlewares: ['authelia', 'deleted-one', 'badger', 'x@file'] },
  };
  const weighted: Service = {
    id: 'split',
    name: 'Split',
    type: 'weighted',
    protocol: 'http',
    config: {
      services: [
        { name: 'app-v2', weight: 1 },
        { name: 'gone-svc', weight: 1 },
      ],
    },
  };
  const res = workedResource();
  res.middlewares = [
    { id: 'authelia', priority: 200 },
    { id: 'deleted-mw', priority: 300 },
  ];
  res.service_id = 'deleted-svc';
  const result = generateConfig(
    pangolinInput(parseLossless(WORKED_UPSTREAM), {
      middlewares: [authelia, chain],
      services: [appV2, weighted],
      resources: [res],
    }),
  );
  const config = result.config as Record<string, any>;
  const r = router(config, '1-app-router');
  t.deepEqual(r.middlewares, ['1-app-router_headers', 'authelia', 'crowdsec@file', 'badger']);
  t.is(r.service, '1-app-service', 'the upstream service stays when the assigned one is gone');
  // the chain is still emitted as written
  t.deepEqual(config.http.middlewares.secure, {
    chain: { middlewares: ['authelia', 'deleted-one', 'badger', 'x@file'] },
  });
  t.deepEqual(result.dangling_references, [
    { from: '/api/middlewares/secure', ref: '/api/middlewares/deleted-one' },
    { from: '/api/resources/1-app-router', ref: '/api/middlewares/deleted-mw' },
    { from: '/api/resources/1-app-router', ref: '/api/services/deleted-svc' },
    { from: '/api/services/split', ref: '/api/services/gone-svc' },
  ]);
});

test('disabled resources and resources without overrides produce nothing', (t) => {
  const upstream = parseLossless(WORKED_UPSTREAM);
  const disabled = { ...workedResource(), status: 'disabled' as const };
  const plain = resource('1-app-router-redirect', { upstream_service: '1-app-service' });
  const result = generateConfig(
    pangolinInput(upstream, { middlewares: [authelia, rateLimit], services: [appV2], resources: [disabled, plain] }),
  );
  const expected = structuredClone(upstream) as Record<string, any>;
  expected.http.middlewares.authelia = { forwardAuth: authelia.config };
  expected.http.middlewares['rate-limit'] = { rateLimit: rateLimit.config };
  expected.http.services['app-v2'] = { loadBalancer: appV2.config };
  t.deepEqual(result.config, expected);
  t.deepEqual(result.resources['1-app-router'], {
    effective_middlewares: [],
    effective_service: '1-app-service',
    emitted: false,
    warnings: [],
  });
  t.false(result.resources['1-app-router-redirect'].emitted);
  t.is(result.counts.patched_routers, 0);
});

test('a resource whose router is absent upstream is not emitted and says why', (t) => {
  const ghost = resource('ghost-router', { middlewares: [{ id: 'authelia', priority: 100 }] });
  const result = generateConfig(
    pangolinInput(parseLossless(WORKED_UPSTREAM), { middlewares: [authelia], resources: [ghost] }),
  );
  t.false(result.resources['ghost-router'].emitted);
  t.regex(result.resources['ghost-router'].warnings[0], /ghost-router@http/);
  t.false('ghost-router' in (result.config as any).http.routers);
});

test('Pangolin mode without any upstream body yet emits only our objects', (t) => {
  const result = generateConfig(
    pangolinInput(null, { middlewares: [authelia], services: [appV2], resources: [workedResource()] }),
  );
  t.deepEqual(result.config, {
    http: {
      middlewares: { authelia: { forwardAuth: authelia.config } },
      services: { 'app-v2': { loadBalancer: appV2.config } },
    },
  });
  t.false(result.resources['1-app-router'].emitted);
  t.is(result.resources['1-app-router'].warnings.length, 1);
  t.deepEqual(schemaWarnings(result.config), []);
});

test('different key insertion and list order give identical bytes', (t) => {
  const redirect = () =>
    resource('1-app-router-redirect', {
      upstream_service: '1-app-service',
      middlewares: [{ id: 'rate-limit', priority: 100 }],
    });
  const base = { ...workedInput(), resources: [workedResource(), redirect()] };
  const shuffled = pangolinInput(reverseKeys(parseLossless(WORKED_UPSTREAM)), {
    middlewares: [rateLimit, authelia].map(reverseKeys),
    services: [reverseKeys(appV2)],
    resources: [redirect(), workedResource()].map(reverseKeys),
  });
  const a = generateConfig(base);
  const b = generateConfig(shuffled);
  t.true(serializeJson(a.config).equals(serializeJson(b.config)));
  t.true(serializeYaml(a.config).equals(serializeYaml(b.config)));
  t.deepEqual(a.resources, b.resources);
});

test('generation never mutates its input', (t) => {
  const input = workedInput();
  input.resources[0].config.mtls.enabled = true;
  input.resources[0].config.tcp.enabled = true;
  const before = stringifyCanonical(input);
  deepFreeze(input); // any write into the input would now throw
  const result = generateConfig(input);
  t.is(stringifyCanonical(input), before);
  // copy-on-write: a patched router is a copy, editing it leaves the input intact; objects that
  // generation does not change (our middleware configs) are shared, read-only, with the input
  (result.config as any).http.routers['1-app-router'].tls.certResolver = 'changed';
  t.is(stringifyCanonical(input), before);
  t.is(
    (result.config as any).http.middlewares.authelia.forwardAuth,
    input.middlewares.find((m) => m.id === 'authelia')!.config,
  );
});
