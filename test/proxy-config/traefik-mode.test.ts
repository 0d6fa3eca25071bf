import test from 'ava';
import { readFileSync } from 'node:fs';
import { fixture } from '../helpers/shared.ts';
import { generateConfig, type GenerationInput } from '../../model/generate/generate.ts';
import type { Resource } from '../../model/types.ts';
import { serializeJson, serializeYaml } from '../../plugins/proxy-config/serialize.ts';
import { authelia, entry, loadFixture, mtlsState, resource, router, schemaWarnings } from './inputs.ts';

type Config = Record<string, any>;

function traefikInput(resources: Resource[], extra: Partial<GenerationInput> = {}): GenerationInput {
  return {
    mode: 'traefik',
    upstream: loadFixture('traefik-api', 'http-routers.json'),
    middlewares: [authelia],
    services: [],
    discoveredServices: [],
    resources,
    mtls: mtlsState(),
    ...extra,
  };
}

const nextcloud = (fields: Partial<Resource> = {}, config: Parameters<typeof resource>[2] = {}) =>
  resource(
    '1-nextcloud-router',
    {
      router: '1-Nextcloud-router@http',
      name: '1-Nextcloud-router',
      source: 'traefik',
      rule: 'Host(`cloud.example.com`)',
      upstream_service: '1-Nextcloud-service',
      upstream_middlewares: ['crowdsec@file', 'badger@http'],
      middlewares: [{ id: 'authelia', priority: 100 }],
      ...fields,
    },
    config,
  );

test('Traefik mode emits a new provider-qualified router that outranks the original by one', (t) => {
  const result = generateConfig(traefikInput([nextcloud()]));
  const config = result.config as Config;
  t.deepEqual(router(config, '1-nextcloud-router'), {
    entryPoints: ['websecure'],
    middlewares: ['authelia', 'crowdsec@file', 'badger@http'],
    priority: 101,
    rule: 'Host(`cloud.example.com`)',
    service: '1-Nextcloud-service@http',
    tls: { certResolver: 'letsencrypt' }, // Traefik's reported options "default" is dropped
  });
  // starts from {}: only our objects, no upstream copy, no API-only fields
  t.deepEqual(Object.keys(config.http).sort(), ['middlewares', 'routers']);
  t.deepEqual(Object.keys(config.http.routers), ['1-nextcloud-router']);
  t.deepEqual(result.resources['1-nextcloud-router'].effective_service, '1-Nextcloud-service@http');
  t.deepEqual(result.counts, { routers: 1, services: 0, middlewares: 1, patched_routers: 1 });
  t.deepEqual(schemaWarnings(config), []);
});

test('Traefik mode keeps a MaxInt64-range priority exact (priorityStr) when adding one', (t) => {
  const api = resource(
    'api',
    { router: 'api@internal', name: 'api', source: 'traefik', upstream_service: 'api@internal' },
    { http: { entrypoints: ['traefik'] } },
  );
  const result = generateConfig(traefikInput([api]));
  const r = router(result.config, 'api');
  t.is(r.priority, 9223372036854775807n);
  t.is(r.ruleSyntax, 'default');
  t.is(r.service, 'api@internal', 'already qualified references are kept');
  t.true(serializeJson(result.config).toString().includes('"priority":9223372036854775807,'));
  t.true(serializeYaml(result.config).toString().includes('priority: 9223372036854775807\n'));
  t.regex(result.resources.api.warnings[0], /above Traefik's maximum user priority/);
  t.deepEqual(schemaWarnings(result.config), []);
});

test('Traefik mode prefers priorityStr over a rounded priority number, and +1 stays exact past MaxInt64', (t) => {
  // JSON.parse rounds 9223372036854775806 to 9223372036854775808: only priorityStr is exact
  const lossy = JSON.parse(readFileSync(fixture('traefik-api', 'http-routers.json'), 'utf8'));
  const api = resource(
    'api',
    { router: 'api@internal', upstream_service: 'api@internal' },
    { http: { entrypoints: ['traefik'] } },
  );
  const ping = resource(
    'ping',
    { router: 'ping@internal', upstream_service: 'ping@internal' },
    { http: { entrypoints: ['web'] } },
  );
  const result = generateConfig(traefikInput([api, ping], { upstream: lossy }));
  t.is(router(result.config, 'api').priority, 9223372036854775807n);
  t.is(router(result.config, 'ping').priority, 9223372036854775808n);
});

test('Traefik mode falls back to the resource fields when the router is not in the list', (t) => {
  const gone = nextcloud({
    router: 'old-router@file',
    name: 'old-router',
    rule: 'Host(`old.example.com`)',
    entrypoints: ['websecure'],
    tls: { cert_resolver: 'letsencrypt', domains: null, options: 'default' },
    priority: 9007199254741000n,
    upstream_service: 'old-service',
    upstream_middlewares: ['crowdsec'],
  });
  const result = generateConfig(traefikInput([gone]));
  t.deepEqual(router(result.config, '1-nextcloud-router'), {
    entryPoints: ['websecure'],
    middlewares: ['authelia', 'crowdsec@file'],
    priority: 9007199254741001n,
    rule: 'Host(`old.example.com`)',
    service: 'old-service@file',
    tls: { certResolver: 'letsencrypt' },
  });
});

test('Traefik mode applies overrides on the new router, discovered services by upstream name', (t) => {
  const discovered = {
    id: '2-grafana-service',
    protocol: 'http' as const,
    type: 'loadBalancer',
    upstream_name: '2-Grafana-service@http',
    provider: 'http',
    config: { servers: [{ url: 'http://100.89.128.8:46211' }] },
  };
  const res = nextcloud(
    { service_id: '2-grafana-service', external_middlewares: [{ name: 'geoblock', priority: 300, provider: 'file' }] },
    { priority: { priority: 1000 }, http: { entrypoints: ['internal'] }, tcp: { enabled: true } },
  );
  const result = generateConfig(traefikInput([res], { discoveredServices: [discovered] }));
  const config = result.config as Config;
  const r = router(config, '1-nextcloud-router');
  t.is(r.service, '2-Grafana-service@http');
  t.is(r.priority, 1000);
  t.deepEqual(r.entryPoints, ['internal']);
  t.deepEqual(r.middlewares, ['geoblock@file', 'authelia', 'crowdsec@file', 'badger@http']);
  // TCP servers derived from the discovered service's load balancer
  t.deepEqual(entry(config, 'tcp', 'services', '1-nextcloud-router_tcp'), {
    loadBalancer: { servers: [{ address: '100.89.128.8:46211' }] },
  });
  t.deepEqual(schemaWarnings(config), []);
});

test('Traefik mode: routers without overrides and disabled resources emit nothing', (t) => {
  const plain = nextcloud({ middlewares: [] });
  const disabled = resource('2-grafana-router', {
    router: '2-Grafana-router@http',
    status: 'disabled',
    middlewares: [{ id: 'authelia', priority: 100 }],
  });
  const result = generateConfig(traefikInput([plain, disabled]));
  t.deepEqual(result.config, { http: { middlewares: { authelia: { forwardAuth: authelia.config } } } });
  t.false(result.resources['1-nextcloud-router'].emitted);
  t.false(result.resources['2-grafana-router'].emitted);
});
