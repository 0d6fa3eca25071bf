import test from 'ava';
import { VersionGate } from '../../plugins/proxy-config/version-gate.ts';
import { FragmentCache, serializeJson } from '../../plugins/proxy-config/serialize.ts';
import {
  gatedKeysIn,
  keyTree,
  nodeAt,
  parseVersion,
  treeFor,
  undecodable,
  VERSIONED_KEYS,
  type VersionedKey,
} from '../../model/traefik-versions.ts';
import type { JsonObject } from '../../model/types.ts';

const server = { url: 'http://10.0.0.1:80' };

/** Pangolin-like document: a TCP sticky key (no Traefik has it), a 3.6 key, a 3.7 key, a 3.5 router key. */
function document(): JsonObject {
  return {
    http: {
      routers: {
        app: { rule: 'Host(`app.test`)', service: 'app', observability: { traceVerbosity: 'minimal', tracing: true } },
        plain: { rule: 'Host(`plain.test`)', service: 'plain' },
      },
      services: {
        app: { loadBalancer: { servers: [server], passiveHealthCheck: { maxFailedAttempts: 3 } } },
        plain: { loadBalancer: { servers: [server] } },
        hrw: { highestRandomWeight: { services: [{ name: 'app' }] } },
        fo: { failover: { service: 'app', fallback: 'plain', errors: { status: ['500-504'] } } },
      },
      middlewares: { retry: { retry: { attempts: 3, timeout: '5s' } }, headers: { headers: { frameDeny: true } } },
    },
    tcp: {
      services: { db: { loadBalancer: { servers: [{ address: '10.0.0.2:5432' }], sticky: { cookie: {} } } } },
    },
    udp: { services: { dns: { loadBalancer: { servers: [{ address: '10.0.0.3:53' }], sticky: { cookie: {} } } } } },
  };
}

const at = (config: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], config);

test('versions parse with or without v, with a pre-release suffix; anything else is unknown', (t) => {
  t.deepEqual(parseVersion('3.5.3'), [3, 5, 3]);
  t.deepEqual(parseVersion('v3.7.15'), [3, 7, 15]);
  t.deepEqual(parseVersion('3.6'), [3, 6, 0]);
  t.deepEqual(parseVersion('3.6.0-rc1'), [3, 6, 0]);
  t.is(parseVersion('dev'), null);
  t.is(parseVersion(''), null);
  t.is(parseVersion(null), null);
});

test('Traefik 3.5.3 loses the 3.6 and 3.7 keys and the keys no version has; keeps its own', (t) => {
  const original = document();
  const snapshot = structuredClone(original);
  const { config, dropped } = new VersionGate().apply(original, '3.5.3');
  t.deepEqual(original, snapshot, 'the input document is never changed');
  t.deepEqual(dropped.map((d) => `${d.path} ${d.key} ${d.min_version}`).sort(), [
    '/http/middlewares/retry/retry timeout 3.7.0',
    '/http/services/app/loadBalancer passiveHealthCheck 3.6.0',
    '/http/services/fo/failover errors 3.7.0',
    '/http/services/hrw highestRandomWeight 3.6.0',
    '/tcp/services/db/loadBalancer sticky null',
    '/udp/services/dns/loadBalancer sticky null',
  ]);
  t.deepEqual(at(config, 'http', 'services', 'app'), { loadBalancer: { servers: [server] } });
  // a service left with no type is dropped whole: Traefik refuses an empty object too
  t.false(Object.hasOwn(at(config, 'http', 'services') as object, 'hrw'));
  t.deepEqual(at(config, 'http', 'services', 'fo'), { failover: { service: 'app', fallback: 'plain' } });
  t.deepEqual(at(config, 'http', 'middlewares', 'retry'), { retry: { attempts: 3 } });
  t.deepEqual(at(config, 'tcp', 'services', 'db'), { loadBalancer: { servers: [{ address: '10.0.0.2:5432' }] } });
  // 3.5.0 decodes traceVerbosity
  t.is(at(config, 'http', 'routers', 'app', 'observability', 'traceVerbosity'), 'minimal');
  // untouched objects are the same objects (no copies): the serializer's cache recognises them
  t.is(at(config, 'http', 'services', 'plain'), at(original, 'http', 'services', 'plain'));
  t.is(at(config, 'http', 'routers'), at(original, 'http', 'routers'));
  t.is(at(config, 'http', 'middlewares', 'headers'), at(original, 'http', 'middlewares', 'headers'));
});

test('Traefik 3.4 also loses the router traceVerbosity (3.5.0); 3.7.15 keeps everything a version has', (t) => {
  const old = new VersionGate().apply(document(), 'v3.4.1');
  t.true(old.dropped.some((d) => d.key === 'traceVerbosity' && d.path === '/http/routers/app/observability'));
  t.deepEqual(at(old.config, 'http', 'routers', 'app', 'observability'), { tracing: true });

  const original = document();
  const recent = new VersionGate().apply(original, '3.7.15');
  t.deepEqual(
    recent.dropped.map((d) => d.key),
    ['sticky', 'sticky'],
  );
  t.is(at(recent.config, 'http'), at(original, 'http'), 'nothing of http changes for 3.7.15');
  t.deepEqual(at(recent.config, 'http', 'services', 'fo', 'failover', 'errors'), { status: ['500-504'] });
});

test('with the version unknown only the keys no Traefik version has are dropped', (t) => {
  const original = document();
  const { config, dropped } = new VersionGate().apply(original, null);
  t.deepEqual(
    dropped.map((d) => `${d.path} ${d.key}`),
    ['/tcp/services/db/loadBalancer sticky', '/udp/services/dns/loadBalancer sticky'],
  );
  t.is(at(config, 'http'), at(original, 'http'));
  // an unparsable version counts as unknown
  t.is(new VersionGate().apply(document(), 'dev').dropped.length, 2);
});

test('a document without gated keys is returned as it is, and the same call is memoised', (t) => {
  const clean = { http: { services: { plain: { loadBalancer: { servers: [server] } } } } };
  const gate = new VersionGate();
  const first = gate.apply(clean, '3.5.3');
  t.is(first.config, clean);
  t.deepEqual(first.dropped, []);
  t.is(gate.apply(clean, '3.5.3'), first, 'same config, same version: the same result object');
  t.not(gate.apply(clean, '3.7.15'), first, 'another version is another result');
});

test('a changed object keeps its copy across generations, so its serialized text is reused', (t) => {
  const gate = new VersionGate();
  const shared = { loadBalancer: { servers: [server], passiveHealthCheck: { maxFailedAttempts: 3 } } };
  const one = gate.apply({ http: { services: { app: shared, a: { loadBalancer: { servers: [server] } } } } }, '3.5.3');
  const two = gate.apply({ http: { services: { app: shared, b: { loadBalancer: { servers: [server] } } } } }, '3.5.3');
  t.is(at(one.config, 'http', 'services', 'app'), at(two.config, 'http', 'services', 'app'));
  t.is(two.dropped.length, 1, 'the key is listed for each generation that drops it');
  // bytes equal what a plain serialisation of the gated object gives
  const cache = new FragmentCache();
  serializeJson(one.config, cache);
  const body = serializeJson(two.config, cache).toString();
  t.false(body.includes('passiveHealthCheck'));
  t.true(body.includes('"app":{"loadBalancer":{"servers":[{"url":"http://10.0.0.1:80"}]}}'));
});

test('a custom table: array items and fixed children are walked, empty parents removed', (t) => {
  const table: VersionedKey[] = [
    { at: 'http.services.*.loadBalancer.servers.[]', key: 'preservePath', since: '9.0.0', source: 'test' },
  ];
  const gate = new VersionGate(keyTree(table));
  const config = {
    http: {
      services: {
        s: { loadBalancer: { servers: [{ url: 'http://a', preservePath: true }, { url: 'http://b' }] } },
      },
    },
  };
  const { config: out, dropped } = gate.apply(config, '3.7.15');
  t.deepEqual(at(out, 'http', 'services', 's', 'loadBalancer', 'servers'), [{ url: 'http://a' }, { url: 'http://b' }]);
  t.deepEqual(dropped, [
    { path: '/http/services/s/loadBalancer/servers/0', key: 'preservePath', min_version: '9.0.0' },
  ]);
});

test('the table: every entry has a source, a parsable version or null, and is found under its path', (t) => {
  for (const entry of VERSIONED_KEYS) {
    t.true(entry.source.length > 10, `${entry.at}.${entry.key} has a source`);
    if (entry.since !== null) t.truthy(parseVersion(entry.since), `${entry.key}: ${entry.since}`);
    t.true(undecodable(entry, [3, 0, 0]), `${entry.key} is unknown to 3.0.0`);
  }
  // what the API reads: gated keys inside one object's config
  const found = gatedKeysIn(
    { servers: [server], passiveHealthCheck: { maxFailedAttempts: 2 } },
    nodeAt(['http', 'services', '*', 'loadBalancer']),
    '/config',
  );
  t.deepEqual(
    found.map((f) => [f.pointer, f.entry.since]),
    [['/config/passiveHealthCheck', '3.6.0']],
  );
  t.deepEqual(
    gatedKeysIn({ servers: [], sticky: {} }, nodeAt(['tcp', 'services', '*', 'loadBalancer'])).map(
      (f) => f.entry.since,
    ),
    [null],
  );
});

/** Keys of 3.1 to 3.7 found by probing the release binaries (model/traefik-versions.ts). */
function probedDocument(): JsonObject {
  return {
    http: {
      routers: {
        app: {
          rule: 'Host(`app.test`)',
          service: 'app',
          observability: { tracing: false, traceVerbosity: 'detailed' },
        },
      },
      services: {
        app: {
          loadBalancer: {
            servers: [{ url: 'http://10.0.0.1:80', preservePath: true }],
            strategy: 'p2c',
            sticky: { cookie: { name: 'lb', path: '/app', domain: 'app.test' } },
            healthCheck: { path: '/health', unhealthyInterval: '5s' },
          },
        },
      },
      middlewares: {
        csp: { headers: { frameDeny: true, contentSecurityPolicyReportOnly: "default-src 'self'" } },
        zip: { compress: { minResponseBodyBytes: 1024, encodings: ['zstd', 'gzip'] } },
        enc: { encodedCharacters: { allowEncodedSlash: true } },
      },
      serversTransports: { strict: { serverName: 'app.test', minVersion: 'VersionTLS12' } },
    },
    tcp: { serversTransports: { pp: { dialTimeout: '5s', proxyProtocol: { version: 2 } } } },
    tls: { options: { modern: { minVersion: 'VersionTLS13', disableSessionTickets: true } } },
  };
}

const droppedKeys = (version: string): string[] =>
  new VersionGate()
    .apply(probedDocument(), version)
    .dropped.map((d) => `${d.path} ${d.key} ${d.min_version}`)
    .sort();

test('keys probed in 3.1-3.7: Traefik 3.0.4 loses them all (a new middleware type with its middleware)', (t) => {
  t.deepEqual(
    droppedKeys('3.0.4'),
    [
      '/http/middlewares/csp/headers contentSecurityPolicyReportOnly 3.1.0',
      '/http/middlewares/enc encodedCharacters 3.7.0',
      '/http/middlewares/zip/compress encodings 3.2.0',
      '/http/routers/app observability 3.3.0',
      '/http/services/app/loadBalancer strategy 3.4.0',
      '/http/services/app/loadBalancer/healthCheck unhealthyInterval 3.5.0',
      '/http/services/app/loadBalancer/servers/0 preservePath 3.2.0',
      '/http/services/app/loadBalancer/sticky/cookie domain 3.4.0',
      '/http/services/app/loadBalancer/sticky/cookie path 3.3.0',
      '/http/serversTransports/strict minVersion 3.7.0',
      '/tcp/serversTransports/pp proxyProtocol 3.5.2',
      '/tls/options/modern disableSessionTickets 3.4.0',
    ].sort(),
  );
  const { config } = new VersionGate().apply(probedDocument(), '3.0.4');
  t.deepEqual(at(config, 'http', 'routers', 'app'), { rule: 'Host(`app.test`)', service: 'app' });
  t.deepEqual(at(config, 'http', 'services', 'app', 'loadBalancer'), {
    servers: [{ url: 'http://10.0.0.1:80' }],
    sticky: { cookie: { name: 'lb' } },
    healthCheck: { path: '/health' },
  });
  // the encodedCharacters middleware is left empty, so it goes: Traefik refuses an empty middleware
  t.deepEqual(Object.keys(at(config, 'http', 'middlewares') as object), ['csp', 'zip']);
  t.deepEqual(at(config, 'tls', 'options', 'modern'), { minVersion: 'VersionTLS13' });
});

test('keys probed in 3.1-3.7: Traefik 3.3.2 keeps the 3.1-3.3 ones, 3.5.3 the 3.4/3.5 ones, 3.7.15 all', (t) => {
  t.deepEqual(
    droppedKeys('3.3.2'),
    [
      '/http/middlewares/enc encodedCharacters 3.7.0',
      '/http/routers/app/observability traceVerbosity 3.5.0',
      '/http/services/app/loadBalancer strategy 3.4.0',
      '/http/services/app/loadBalancer/healthCheck unhealthyInterval 3.5.0',
      '/http/services/app/loadBalancer/sticky/cookie domain 3.4.0',
      '/http/serversTransports/strict minVersion 3.7.0',
      '/tcp/serversTransports/pp proxyProtocol 3.5.2',
      '/tls/options/modern disableSessionTickets 3.4.0',
    ].sort(),
  );
  // proxyProtocol on a TCP serversTransport came with the patch release 3.5.2
  t.deepEqual(
    droppedKeys('3.5.1'),
    [
      '/http/middlewares/enc encodedCharacters 3.7.0',
      '/http/serversTransports/strict minVersion 3.7.0',
      '/tcp/serversTransports/pp proxyProtocol 3.5.2',
    ].sort(),
  );
  t.deepEqual(
    droppedKeys('3.5.3'),
    ['/http/middlewares/enc encodedCharacters 3.7.0', '/http/serversTransports/strict minVersion 3.7.0'].sort(),
  );
  const original = probedDocument();
  const recent = new VersionGate().apply(original, 'v3.7.15');
  t.deepEqual(recent.dropped, []);
  t.is(recent.config, original, 'nothing to drop: the document itself');
});

test('an object Traefik decodes empty stays when its only key is dropped; any other emptied object goes', (t) => {
  const original: JsonObject = {
    http: {
      services: {
        app: { loadBalancer: { servers: [server], sticky: { cookie: { path: '/app', domain: 'app.test' } } } },
      },
      middlewares: {
        zip: { compress: { encodings: ['zstd'] } },
        allow: { ipAllowList: { sourceRange: ['10.0.0.0/8'], ipStrategy: { ipv6Subnet: 64 } } },
        limit: { rateLimit: { average: 10, sourceCriterion: { ipStrategy: { ipv6Subnet: 64 } } } },
      },
    },
  };
  const { config, dropped } = new VersionGate().apply(original, '3.0.4');
  t.is(dropped.length, 5);
  // Traefik 3.0.4 decodes compress {}, sticky cookie {} and ipAllowList ipStrategy {} (allowEmpty):
  // dropping them whole would lose the middleware (its routers then fail) or the sticky sessions
  t.deepEqual(at(config, 'http', 'middlewares', 'zip'), { compress: {} });
  t.deepEqual(at(config, 'http', 'services', 'app', 'loadBalancer', 'sticky'), { cookie: {} });
  t.deepEqual(at(config, 'http', 'middlewares', 'allow', 'ipAllowList'), {
    sourceRange: ['10.0.0.0/8'],
    ipStrategy: {},
  });
  // "ipStrategy cannot be a standalone element" inside sourceCriterion: it goes, and its emptied parent
  t.deepEqual(at(config, 'http', 'middlewares', 'limit'), { rateLimit: { average: 10 } });
});

test('the gate walks only the keys the version cannot decode: for 3.7 or unknown, the tcp/udp sticky paths', (t) => {
  for (const version of [parseVersion('3.7.15'), null]) {
    const tree = treeFor(version);
    t.deepEqual([...tree!.children.keys()].sort(), ['tcp', 'udp']);
  }
  t.is(treeFor(parseVersion('3.7.15'), keyTree([])), null, 'an empty table: nothing to walk');
  // 3.6.15 still lacks the 3.7 keys and nothing older
  const for36 = treeFor(parseVersion('3.6.15'))!;
  t.deepEqual([...nodeAt(['http', 'middlewares', '*', 'forwardAuth'], for36)!.keys.keys()], ['authSigninURL']);
  t.is(nodeAt(['http', 'routers', '*'], for36), null);
  const original = probedDocument();
  t.is(new VersionGate().apply(original, '3.7.15').config, original);
});
