import test from 'ava';
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { etagOf, FragmentCache, serializeJson, serializeYaml } from '../../plugins/proxy-config/serialize.ts';
import { generateConfig, type GenerationInput } from '../../model/generate/generate.ts';
import {
  appV2,
  authelia,
  fixtureResource,
  type FixtureRouter,
  loadFixture,
  pangolinInput,
  rateLimit,
  SCHEMA_PATH,
  schemaWarnings,
} from './inputs.ts';
import { createSchemaChecker } from '../../plugins/proxy-config/schema-check.ts';

const sample = {
  http: {
    routers: {
      b: { priority: 9223372036854775808n, rule: 'Host(`b.example.com`)' },
      a: { service: 'svc', entryPoints: ['web'] },
    },
    middlewares: {
      long: {
        headers: { customRequestHeaders: { 'X-Long': 'word '.repeat(60).trim(), 'X-True': 'true', 'X-Empty': '' } },
      },
    },
  },
  tls: {
    options: {
      sm_mtls: { clientAuth: { caFiles: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'] } },
    },
  },
};

test('JSON is compact, recursively key-sorted, BigInt as digits, one trailing newline', (t) => {
  const text = serializeJson(sample).toString('utf8');
  t.true(text.startsWith('{"http":{"middlewares":{"long":'));
  t.true(
    text.includes('"routers":{"a":{"entryPoints":["web"],"service":"svc"},"b":{"priority":9223372036854775808,"rule"'),
  );
  t.true(text.endsWith('}}}}}\n'));
  t.is(text.indexOf('\n'), text.length - 1, 'only the final newline');
  t.false(/[{,:] /.test(text));
});

test('YAML has sorted keys, 2-space indent, unfolded lines, exact BigInt and round-trips', (t) => {
  const text = serializeYaml(sample).toString('utf8');
  t.true(text.startsWith('http:\n  middlewares:\n    long:\n'));
  t.true(
    text.includes(
      '\n  routers:\n    a:\n      entryPoints:\n        - web\n      service: svc\n    b:\n      priority: 9223372036854775808\n',
    ),
  );
  t.true(text.includes(`X-Long: ${'word '.repeat(60).trim()}\n`), 'no line folding');
  t.true(text.includes('X-True: "true"\n'), 'strings that look like booleans stay strings');
  t.false(text.includes('&') || text.includes('*'), 'no anchors or aliases');
  t.deepEqual(parseYaml(text, { intAsBigInt: true }), sample);
});

test('objects shared between two places are written out twice, not as YAML aliases', (t) => {
  const tls = { certResolver: 'letsencrypt' };
  const text = serializeYaml({ a: { tls }, b: { tls } }).toString('utf8');
  t.is(text, 'a:\n  tls:\n    certResolver: letsencrypt\nb:\n  tls:\n    certResolver: letsencrypt\n');
});

test('serialisation is byte-identical whatever the key insertion order', (t) => {
  const reordered = {
    tls: sample.tls,
    http: { middlewares: sample.http.middlewares, routers: { a: sample.http.routers.a, b: sample.http.routers.b } },
  };
  t.true(serializeJson(sample).equals(serializeJson(reordered)));
  t.true(serializeYaml(sample).equals(serializeYaml(reordered)));
});

test('etagOf is the quoted first 32 hex digits of the SHA-256 of the bytes', (t) => {
  const body = serializeJson(sample);
  const etag = etagOf(body);
  t.regex(etag, /^"[0-9a-f]{32}"$/);
  t.is(etag, `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`);
  t.not(etagOf(serializeYaml(sample)), etag);
});

test('schema check: the fixtures validate and BigInt priorities are accepted', (t) => {
  t.deepEqual(schemaWarnings(loadFixture('pangolin', 'traefik-config.json')), []);
  t.deepEqual(
    schemaWarnings({ http: { routers: { r: { rule: 'Path(`/`)', service: 's', priority: 9223372036854775807n } } } }),
    [],
  );
});

test('schema check lists newer Traefik fields once each, without oneOf noise', (t) => {
  const config = {
    http: {
      routers: { r: { rule: 'Path(`/`)', service: 's', observability: { accessLogs: false } } },
      middlewares: { h: { headers: { bogus: true } }, e: { encodedCharacters: {} } },
      services: { s: { loadBalancer: { servers: [{ url: 'http://a' }], strategy: 'p2c' } } },
    },
  };
  const expected = [
    { path: '/http/middlewares/e', message: 'must NOT have additional properties: "encodedCharacters"' },
    { path: '/http/middlewares/h/headers', message: 'must NOT have additional properties: "bogus"' },
    { path: '/http/routers/r', message: 'must NOT have additional properties: "observability"' },
    { path: '/http/services/s/loadBalancer', message: 'must NOT have additional properties: "strategy"' },
  ];
  t.deepEqual(schemaWarnings(config), expected);
  // the provider's checker (entries checked apart, remembered by identity) says the same, twice
  const memo = createSchemaChecker(SCHEMA_PATH, { memo: true });
  t.deepEqual(memo(config), expected);
  t.deepEqual(memo(config), expected);
});

test('schema check with memo: same warnings as a full check as objects come and go; top-level errors still found', (t) => {
  const memo = createSchemaChecker(SCHEMA_PATH, { memo: true });
  const good = { rule: 'Path(`/`)', service: 's' };
  const bad = { rule: 'Path(`/`)', service: 's', observability: {} };
  const configs: unknown[] = [
    { http: { routers: { a: good, b: bad } } },
    { http: { routers: { a: good, c: bad } } },
    { http: { routers: { a: good } }, tcp: { routers: { t: { rule: 5 } } } },
    { http: { routers: { 'a/b~c': bad }, bogus: {} } },
    { http: { routers: [] } },
    { tls: { options: { x: { minVersion: 12 } } }, extra: true },
  ];
  for (const [i, config] of configs.entries()) t.deepEqual(memo(config), schemaWarnings(config), `config ${i}`);
  t.true(schemaWarnings(configs[3]).some((w) => w.path === '/http/routers/a~1b~0c'));
});

const JELLYFIN: FixtureRouter = {
  id: '6-jellyfin-media-router',
  name: '6-Jellyfin-Media-router',
  host: 'media.example.com',
  service: '6-Jellyfin-Media-service',
};

test('the fragment cache gives the same bytes as a full serialisation, generation after generation', (t) => {
  const upstream = loadFixture('pangolin', 'traefik-config.json');
  const cache = new FragmentCache();
  const jellyfin = fixtureResource(JELLYFIN, {}, { headers: { request: { 'X-A': '1' }, response: {} } });
  const steps: GenerationInput[] = [
    pangolinInput(upstream, { middlewares: [authelia, rateLimit], services: [appV2], resources: [jellyfin] }),
    // same objects again: every unchanged object comes from the cache
    pangolinInput(upstream, { middlewares: [authelia, rateLimit], services: [appV2], resources: [jellyfin] }),
    // a changed middleware (a new object, as the store makes on every change) and a new upstream body
    pangolinInput(loadFixture('pangolin', 'traefik-config-changed.json'), {
      middlewares: [{ ...rateLimit, config: { average: 5, burst: 1 } }],
      services: [appV2],
      resources: [jellyfin],
    }),
    pangolinInput(upstream, { middlewares: [], services: [], resources: [] }),
  ];
  for (const [i, input] of steps.entries()) {
    const config = generateConfig(input).config;
    t.true(serializeJson(config, cache).equals(serializeJson(config)), `step ${i}`);
  }
});

test('copy-on-write: unchanged upstream objects keep their identity, the snapshot is never changed', (t) => {
  const upstream = loadFixture('pangolin', 'traefik-config.json') as any;
  const before = JSON.stringify(upstream);
  const jellyfin = fixtureResource(JELLYFIN, {}, { priority: { priority: 900 } });
  const first = generateConfig(pangolinInput(upstream, { resources: [jellyfin] })).config as any;
  const second = generateConfig(pangolinInput(upstream, { resources: [jellyfin] })).config as any;
  t.is(first.http.routers['1-Nextcloud-router'], upstream.http.routers['1-Nextcloud-router']);
  t.is(second.http.services['1-Nextcloud-service'], first.http.services['1-Nextcloud-service']);
  t.not(first.http.routers['6-Jellyfin-Media-router'], upstream.http.routers['6-Jellyfin-Media-router']);
  t.is(first.http.routers['6-Jellyfin-Media-router'].priority, 900);
  t.is(JSON.stringify(upstream), before);
});
