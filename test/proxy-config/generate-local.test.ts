/**
 * The generator and own resources (API.md §4.24, §4.9): a `source: local` resource is emitted as
 * router `<id>` from its own definition in every mode, the G6/G7 patches apply on top, data source
 * mode `none` emits only our objects, and a local router that cannot be emitted says why.
 */
import test from 'ava';
import { generateConfig } from '../../model/generate/generate.ts';
import { PatchMemo } from '../../model/generate/generate-memo.ts';
import type { Resource } from '../../model/types.ts';
import { appV2, generatePangolin, loadFixture, pangolinInput, rateLimit, resource, schemaWarnings } from './inputs.ts';

/** A local resource as LocalWrites builds it (hosts → rule, no upstream fields). */
const local = (id: string, fields: Partial<Omit<Resource, 'config'>> = {}, config = {}): Resource =>
  resource(
    id,
    {
      source: 'local',
      router: `${id}@http`,
      rule: `Host(\`${id}.internal\`)`,
      host: `${id}.internal`,
      hosts: [`${id}.internal`],
      entrypoints: ['websecure'],
      tls: { cert_resolver: null, domains: null, options: null },
      priority: null,
      upstream_service: '',
      upstream_middlewares: [],
      service_id: 'app-v2',
      ...fields,
    },
    config,
  );

test('Pangolin mode: a local resource is a router <id> next to the upstream ones, schema-valid', (t) => {
  const { result, config } = generatePangolin([local('dash')], { services: [appV2] });
  t.deepEqual(config.http.routers.dash, {
    entryPoints: ['websecure'],
    rule: 'Host(`dash.internal`)',
    service: 'app-v2',
    tls: {},
  });
  t.truthy(config.http.routers['1-Nextcloud-router']);
  t.like(result.resources.dash, { emitted: true, effective_service: 'app-v2', effective_middlewares: [] });
  t.deepEqual(result.resources.dash.warnings, []);
  t.deepEqual(schemaWarnings(config), []);
});

test('the G6/G7 patches apply to a local router: middlewares, headers, priority override, entry points, tls', (t) => {
  const resourceWithAll = local(
    'dash',
    {
      priority: 50,
      rule: '(Host(`a.internal`) || Host(`b.internal`)) && PathPrefix(`/ui`)',
      middlewares: [{ id: 'rate-limit', priority: 100 }],
      external_middlewares: [{ name: 'crowdsec@file', priority: 200, provider: null }],
    },
    {
      headers: { request: { 'X-A': '1' }, response: {} },
      priority: { priority: 900 },
      tls: { cert_resolver: 'letsencrypt', domains: null, options: null },
    },
  );
  const { config, result } = generatePangolin([resourceWithAll], { services: [appV2], middlewares: [rateLimit] });
  t.deepEqual(config.http.routers.dash, {
    entryPoints: ['websecure'],
    middlewares: ['dash_headers', 'crowdsec@file', 'rate-limit'],
    priority: 900,
    rule: '(Host(`a.internal`) || Host(`b.internal`)) && PathPrefix(`/ui`)',
    service: 'app-v2',
    tls: { certResolver: 'letsencrypt' },
  });
  t.deepEqual(config.http.middlewares.dash_headers, { headers: { customRequestHeaders: { 'X-A': '1' } } });
  t.deepEqual(result.resources.dash.effective_middlewares, ['dash_headers', 'crowdsec@file', 'rate-limit']);
});

test('mode none: only our objects; discovered resources are not emitted (their overrides say they wait)', (t) => {
  const discovered = resource('1-app-router', { router: '1-app-router@http' }, { priority: { priority: 5 } });
  const result = generateConfig(
    pangolinInput(null, {
      mode: 'none',
      services: [appV2],
      middlewares: [rateLimit],
      resources: [discovered, local('dash', { tls: null, entrypoints: ['web'], priority: 10 })],
    }),
  );
  t.deepEqual(result.config, {
    http: {
      middlewares: { 'rate-limit': { rateLimit: { average: 100, burst: 50 } } },
      routers: { dash: { entryPoints: ['web'], priority: 10, rule: 'Host(`dash.internal`)', service: 'app-v2' } },
      services: { 'app-v2': { loadBalancer: { servers: [{ url: 'http://10.0.0.7:8080' }] } } },
    },
  });
  t.false(result.resources['1-app-router'].emitted);
  t.regex(result.resources['1-app-router'].warnings[0], /mode none/);
  t.true(result.resources.dash.emitted);
});

test('Traefik mode: a local router keeps its own priority (no +1 over an upstream router)', (t) => {
  const result = generateConfig({
    ...pangolinInput([], { services: [appV2], resources: [local('dash', { priority: 42 })] }),
    mode: 'traefik',
  });
  t.is((result.config as any).http.routers.dash.priority, 42);
  t.is((result.config as any).http.routers.dash.service, 'app-v2');
});

test('a local router without a usable service, or whose key the upstream holds, is not emitted and says why', (t) => {
  const upstream = loadFixture('pangolin', 'traefik-config.json');
  const noService = generateConfig(pangolinInput(upstream, { resources: [local('dash', { service_id: 'gone' })] }));
  t.false(noService.resources.dash.emitted);
  t.regex(noService.resources.dash.warnings.join(' '), /service gone cannot be referenced/);
  t.deepEqual(noService.dangling_references, [{ from: '/api/resources/dash', ref: '/api/services/gone' }]);
  t.false('dash' in (noService.config as any).http.routers);

  const taken = generateConfig(
    pangolinInput(upstream, { services: [appV2], resources: [local('2-Grafana-router', { service_id: 'app-v2' })] }),
  );
  t.false(taken.resources['2-Grafana-router'].emitted);
  t.regex(taken.resources['2-Grafana-router'].warnings.join(' '), /already defined upstream/);
  t.is((taken.config as any).http.routers['2-Grafana-router'].service, '2-Grafana-service');
  t.is(taken.conflicts.length, 1);
});

test('the memo replays an unchanged local router byte for byte', (t) => {
  const memo = new PatchMemo();
  const input = pangolinInput(loadFixture('pangolin', 'traefik-config.json'), {
    services: [appV2],
    resources: [local('dash')],
  });
  const first = generateConfig(input, memo);
  const second = generateConfig(input, memo);
  t.deepEqual(second.config, first.config);
  t.deepEqual(second.resources, first.resources);
  t.true(memo.stats.replayed >= 1, JSON.stringify(memo.stats));
});
