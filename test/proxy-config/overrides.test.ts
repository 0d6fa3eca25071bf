import test from 'ava';
import type { Middleware, Resource } from '../../model/types.ts';
import {
  appV2,
  authelia,
  entry,
  fixtureResource,
  generatePangolin,
  rateLimit,
  resource,
  router,
  schemaWarnings,
  type ConfigPatch,
} from './inputs.ts';

const NEXTCLOUD = {
  id: '1-nextcloud-router',
  name: '1-Nextcloud-router',
  host: 'cloud.example.com',
  service: '1-Nextcloud-service',
};

/** Resource `1-Nextcloud-router` of the fixture stack with extra fields and config patches. */
const nextcloud = (fields: Partial<Resource> = {}, config: ConfigPatch = {}): Resource =>
  fixtureResource(NEXTCLOUD, fields, config);

test('config.http.entrypoints replaces the router entry points', (t) => {
  const { config, result } = generatePangolin([nextcloud({}, { http: { entrypoints: ['websecure', 'internal'] } })]);
  t.deepEqual(router(config, '1-Nextcloud-router').entryPoints, ['websecure', 'internal']);
  t.deepEqual(router(config, '1-Nextcloud-router-redirect').entryPoints, ['web'], 'other routers keep theirs');
  t.true(result.resources['1-nextcloud-router'].emitted);
  t.deepEqual(schemaWarnings(config), []);
});

test('config.tls replaces certResolver and sets domains and options', (t) => {
  const tls = {
    cert_resolver: 'dns',
    domains: [{ main: '*.example.com', sans: ['example.com'] }, { main: 'cloud.example.com' }],
    options: 'modern',
  };
  const { config } = generatePangolin([nextcloud({}, { tls })]);
  t.deepEqual(router(config, '1-Nextcloud-router').tls, {
    certResolver: 'dns',
    domains: [{ main: '*.example.com', sans: ['example.com'] }, { main: 'cloud.example.com' }],
    options: 'modern',
  });
  t.deepEqual(schemaWarnings(config), []);
});

test('config.tls gives a router without TLS a tls section', (t) => {
  const wiki = resource(
    '3-wiki',
    {
      router: '3-5e2f283f21admin29-regex-Wiki-router@http',
      upstream_service: '3-5e2f283f21admin29-regex-Wiki-service',
      tls: null,
    },
    { tls: { cert_resolver: 'letsencrypt' } },
  );
  const { config } = generatePangolin([wiki]);
  const r = router(config, '3-5e2f283f21admin29-regex-Wiki-router');
  t.deepEqual(r.tls, { certResolver: 'letsencrypt' });
  t.is(r.priority, 112, 'untouched fields stay');
  t.deepEqual(schemaWarnings(config), []);
});

test('config.priority replaces the router priority', (t) => {
  const { config } = generatePangolin([nextcloud({}, { priority: { priority: 9007199254740991 } })]);
  t.is(router(config, '1-Nextcloud-router').priority, 9007199254740991);
  t.deepEqual(schemaWarnings(config), []);
});

test('config.headers emits <id>_headers first in the chain, passing "" (remove) through', (t) => {
  const headers = {
    request: { 'X-Forwarded-Proto': 'https', 'X-Powered-By': '' },
    response: { Server: '', 'X-Frame-Options': 'DENY' },
  };
  const { config, result } = generatePangolin([nextcloud({}, { headers })]);
  t.deepEqual(entry(config, 'http', 'middlewares', '1-nextcloud-router_headers'), {
    headers: { customRequestHeaders: headers.request, customResponseHeaders: headers.response },
  });
  t.deepEqual(router(config, '1-Nextcloud-router').middlewares, ['1-nextcloud-router_headers', 'badger']);
  t.deepEqual(result.resources['1-nextcloud-router'].effective_middlewares, ['1-nextcloud-router_headers', 'badger']);
  t.deepEqual(schemaWarnings(config), []);
});

test('config.headers with only response headers omits the empty request map', (t) => {
  const { config } = generatePangolin([
    nextcloud({}, { headers: { request: {}, response: { 'X-Robots-Tag': 'none' } } }),
  ]);
  t.deepEqual(entry(config, 'http', 'middlewares', '1-nextcloud-router_headers'), {
    headers: { customResponseHeaders: { 'X-Robots-Tag': 'none' } },
  });
});

test('assigned and external middlewares are ordered by priority, ours first on ties, then by reference', (t) => {
  const compress: Middleware = { id: 'compress', name: 'Compress', type: 'compress', config: {} };
  const res = nextcloud({
    middlewares: [
      { id: 'rate-limit', priority: 100 },
      { id: 'compress', priority: 0 },
      { id: 'authelia', priority: 500 },
    ],
    external_middlewares: [
      { name: 'crowdsec@file', priority: 500, provider: null },
      { name: 'geoblock', priority: 100, provider: 'file' },
      { name: 'auth-local', priority: 100, provider: null },
      { name: 'badger', priority: 1, provider: null },
    ],
  });
  const { config, result } = generatePangolin([res], { middlewares: [authelia, rateLimit, compress] });
  // compress: priority 0 means the default 100; "badger" repeats the upstream one and is kept once, first
  const expected = ['authelia', 'crowdsec@file', 'compress', 'rate-limit', 'auth-local', 'geoblock@file', 'badger'];
  t.deepEqual(router(config, '1-Nextcloud-router').middlewares, expected);
  t.deepEqual(result.resources['1-nextcloud-router'].effective_middlewares, expected);
  t.deepEqual(entry(config, 'http', 'middlewares', 'compress'), { compress: {} });
  t.deepEqual(schemaWarnings(config), []);
});

test('every middleware of ours is emitted, assigned or not', (t) => {
  const { config, result } = generatePangolin([], { middlewares: [authelia, rateLimit] });
  t.deepEqual(entry(config, 'http', 'middlewares', 'authelia'), { forwardAuth: authelia.config });
  t.deepEqual(entry(config, 'http', 'middlewares', 'rate-limit'), { rateLimit: { average: 100, burst: 50 } });
  t.is(result.counts.middlewares, 8);
  t.deepEqual(schemaWarnings(config), []);
});

test('a manual service override points the router at our service, emitted under its protocol', (t) => {
  const { config, result } = generatePangolin([nextcloud({ service_id: 'app-v2' })], { services: [appV2] });
  t.is(router(config, '1-Nextcloud-router').service, 'app-v2');
  t.is(
    router(config, '1-Nextcloud-router-redirect').service,
    '1-Nextcloud-service',
    'the redirect router is not a resource',
  );
  t.deepEqual(entry(config, 'http', 'services', 'app-v2'), { loadBalancer: appV2.config });
  t.is(result.resources['1-nextcloud-router'].effective_service, 'app-v2');
  t.deepEqual(schemaWarnings(config), []);
});

test('a discovered service override uses its upstream key in Pangolin mode', (t) => {
  const grafana = {
    id: '2-grafana-service',
    protocol: 'http' as const,
    type: 'loadBalancer',
    upstream_name: '2-Grafana-service@http',
    provider: 'http',
  };
  const { config, result } = generatePangolin([nextcloud({ service_id: '2-grafana-service' })], {
    discoveredServices: [grafana],
  });
  t.is(router(config, '1-Nextcloud-router').service, '2-Grafana-service');
  t.is(result.resources['1-nextcloud-router'].effective_service, '2-Grafana-service');
  t.is(entry(config, 'http', 'services', '2-grafana-service'), undefined, 'discovered services are never emitted');
  t.deepEqual(schemaWarnings(config), []);
});

test('a service of the wrong protocol is not applied and the resource says why', (t) => {
  const tcpService = {
    ...appV2,
    id: 'ssh-pool',
    protocol: 'tcp' as const,
    config: { servers: [{ address: '10.0.0.2:22' }] },
  };
  const { config, result } = generatePangolin([nextcloud({ service_id: 'ssh-pool' })], { services: [tcpService] });
  t.is(router(config, '1-Nextcloud-router').service, '1-Nextcloud-service');
  t.regex(result.resources['1-nextcloud-router'].warnings[0], /ssh-pool is a tcp service/);
  t.deepEqual(entry(config, 'tcp', 'services', 'ssh-pool'), {
    loadBalancer: { servers: [{ address: '10.0.0.2:22' }] },
  });
  t.deepEqual(schemaWarnings(config), []);
});
