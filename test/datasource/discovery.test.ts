import anyTest, { type TestFn } from 'ava';
import { readFileSync } from 'node:fs';
import { discoveredServicesFrom, servicesFromPangolin, servicesFromTraefik } from '../../model/discovered-services.ts';
import {
  exactPriority,
  hostsOf,
  ownObjectMatcher,
  routersFromPangolin,
  routersFromTraefik,
  type ResourceRecord,
  type UpstreamRouter,
} from '../../model/upstream-routers.ts';
import { reconcile, type ReconcileOptions } from '../../plugins/resources/discovery.ts';
import { slugify } from '../../model/ids.ts';
import {
  fetchPangolinConfig,
  fetchTraefikRouters,
  fetchTraefikServices,
  type UpstreamSource,
} from '../../plugins/datasource/upstream-client.ts';
import { defaultResourceConfig } from '../../model/types.ts';
import { startFakeUpstream, type FakeUpstream, type PangolinFile } from '../helpers/fake-upstream.ts';
import { fixture } from '../helpers/shared.ts';

const test = anyTest as TestFn<{ fake: FakeUpstream }>;
const T1 = '2026-01-01T00:00:00.000Z';
const T2 = '2026-01-01T00:00:05.000Z';
const T3 = '2026-01-01T00:00:10.000Z';
const BASE_IDS = [
  '1-nextcloud-router',
  '2-grafana-router',
  '3-5e2f283f21admin29-regex-wiki-router',
  '6-jellyfin-media-router',
];

const options = (overrides: Partial<ReconcileOptions> = {}): ReconcileOptions => ({
  source: 'pangolin',
  exclude: ['*-redirect'],
  now: T1,
  emptyConfirmations: 3,
  emptyStreak: 0,
  lastWasNonEmpty: true,
  ...overrides,
});

function source(fake: FakeUpstream, type: 'pangolin' | 'traefik'): UpstreamSource {
  return {
    type,
    url: type === 'pangolin' ? fake.pangolinUrl : fake.url,
    skip_tls_verify: false,
    basic_auth: null,
    timeout_ms: 5000,
  };
}

/** Pangolin's body from the fake, through a real socket. */
async function pangolinBody(
  fake: FakeUpstream,
  file: PangolinFile = 'traefik-config.json',
): Promise<Record<string, unknown>> {
  fake.state.pangolinFile = file;
  const result = await fetchPangolinConfig(source(fake, 'pangolin'));
  if (!result.ok) throw new Error(result.error);
  return result.body;
}

async function traefikRouters(fake: FakeUpstream): Promise<Array<Record<string, unknown>>> {
  const result = await fetchTraefikRouters(source(fake, 'traefik'));
  if (!result.ok) throw new Error(result.error);
  return result.items;
}

/** Applies upserts like the store would: a map by id. */
function apply(store: Map<string, ResourceRecord>, upserts: ResourceRecord[]): Map<string, ResourceRecord> {
  for (const resource of upserts) store.set(resource.id, resource);
  return store;
}

async function discoverBase(fake: FakeUpstream): Promise<Map<string, ResourceRecord>> {
  const result = reconcile([], routersFromPangolin(await pangolinBody(fake)), options());
  return apply(new Map(), result.upserts);
}

/** Overrides a user would have set on Grafana; discovery must never touch them. */
function customise(resource: ResourceRecord): ResourceRecord {
  const config = defaultResourceConfig();
  config.priority.priority = 500;
  return { ...resource, middlewares: [{ id: 'authelia', priority: 200 }], service_id: 'grafana-v2', config };
}

test.before(async (t) => {
  t.context.fake = await startFakeUpstream();
});
test.after.always(async (t) => {
  await t.context.fake?.close();
});

test.serial('Pangolin fixture: one active resource per non-redirect HTTP router', async (t) => {
  const text = readFileSync(fixture('pangolin', 'traefik-config.json'), 'utf8');
  const keys = Object.keys((JSON.parse(text) as { http: { routers: object } }).http.routers).filter(
    (key) => !key.endsWith('-redirect'),
  );
  const result = reconcile([], routersFromPangolin(await pangolinBody(t.context.fake)), options());
  t.like(result, { applied: true, suspiciousEmpty: false, newEmptyStreak: 0 });
  t.is(result.upserts.length, keys.length);
  t.deepEqual(
    result.upserts.map((resource) => resource.id),
    BASE_IDS,
  );
  t.deepEqual(result.upserts[0], {
    id: '1-nextcloud-router',
    name: '1-Nextcloud-router',
    router: '1-Nextcloud-router@http',
    source: 'pangolin',
    status: 'active',
    missing_since: null,
    rule: 'Host(`cloud.example.com`)',
    host: 'cloud.example.com',
    hosts: ['cloud.example.com'],
    entrypoints: ['websecure'],
    tls: { cert_resolver: 'letsencrypt', domains: null, options: null },
    priority: 100,
    upstream_service: '1-Nextcloud-service',
    upstream_middlewares: ['badger'],
    middlewares: [],
    external_middlewares: [],
    service_id: null,
    config: defaultResourceConfig(),
  });
  const wiki = result.upserts[2];
  t.like(wiki, { host: 'wiki.example.com', tls: null, priority: 112, entrypoints: ['web'] });
});

test.serial('a sync that changes nothing upstream rewrites nothing', async (t) => {
  const store = await discoverBase(t.context.fake);
  const again = reconcile(
    [...store.values()],
    routersFromPangolin(await pangolinBody(t.context.fake)),
    options({ now: T2 }),
  );
  t.deepEqual(again.upserts, []);
  t.true(again.applied);
});

test.serial('changed fixture: Paperless appears, Grafana is disabled and keeps its settings', async (t) => {
  const store = await discoverBase(t.context.fake);
  store.set('2-grafana-router', customise(store.get('2-grafana-router')!));
  const result = reconcile(
    [...store.values()],
    routersFromPangolin(await pangolinBody(t.context.fake, 'traefik-config-changed.json')),
    options({ now: T2 }),
  );
  t.deepEqual(
    result.upserts.map((resource) => resource.id),
    ['2-grafana-router', '8-paperless-ngx-router'],
  );
  const [grafana, paperless] = result.upserts;
  t.deepEqual(grafana, { ...customise(store.get('2-grafana-router')!), status: 'disabled', missing_since: T2 });
  t.like(paperless, {
    status: 'active',
    router: '8-Paperless-ngx-router@http',
    host: 'paperless.example.com',
    missing_since: null,
  });
});

test.serial('a router coming back re-activates the same resource; missing_since is kept while missing', async (t) => {
  const { fake } = t.context;
  const store = await discoverBase(fake);
  store.set('2-grafana-router', customise(store.get('2-grafana-router')!));
  const changed = routersFromPangolin(await pangolinBody(fake, 'traefik-config-changed.json'));
  apply(store, reconcile([...store.values()], changed, options({ now: T2 })).upserts);
  // still missing later: missing_since stays the first sighting, nothing is rewritten
  t.deepEqual(reconcile([...store.values()], changed, options({ now: T3 })).upserts, []);

  const back = reconcile([...store.values()], routersFromPangolin(await pangolinBody(fake)), options({ now: T3 }));
  t.deepEqual(
    back.upserts.map((resource) => [resource.id, resource.status, resource.missing_since]),
    [
      ['2-grafana-router', 'active', null],
      ['8-paperless-ngx-router', 'disabled', T3],
    ],
  );
  t.deepEqual(back.upserts[0], { ...customise(store.get('2-grafana-router')!), status: 'active', missing_since: null });
});

test.serial('a renumbered router with a byte-equal rule is re-linked to its resource', async (t) => {
  const { fake } = t.context;
  const store = await discoverBase(fake);
  store.set('2-grafana-router', customise(store.get('2-grafana-router')!));
  const body = await pangolinBody(fake);
  const routers = (body.http as { routers: Record<string, unknown> }).routers;
  routers['12-Grafana-router'] = routers['2-Grafana-router'];
  delete routers['2-Grafana-router'];

  const result = reconcile([...store.values()], routersFromPangolin(body), options({ now: T2 }));
  t.deepEqual(
    result.upserts.map((resource) => resource.id),
    ['2-grafana-router'],
  );
  t.deepEqual(result.upserts[0], {
    ...customise(store.get('2-grafana-router')!),
    name: '12-Grafana-router',
    router: '12-Grafana-router@http',
  });
});

test.serial('an already disabled resource is re-linked when a new key brings its rule back', async (t) => {
  const { fake } = t.context;
  const store = await discoverBase(fake);
  apply(
    store,
    reconcile(
      [...store.values()],
      routersFromPangolin(await pangolinBody(fake, 'traefik-config-changed.json')),
      options({ now: T2 }),
    ).upserts,
  );
  t.is(store.get('2-grafana-router')?.status, 'disabled');

  const body = await pangolinBody(fake);
  const routers = (body.http as { routers: Record<string, unknown> }).routers;
  routers['20-Grafana-router'] = routers['2-Grafana-router'];
  delete routers['2-Grafana-router'];
  const result = reconcile([...store.values()], routersFromPangolin(body), options({ now: T3 }));
  t.like(
    result.upserts.find((resource) => resource.id === '2-grafana-router'),
    { status: 'active', router: '20-Grafana-router@http', missing_since: null },
  );
  t.false(result.upserts.some((resource) => resource.id === '20-grafana-router'));
});

test.serial('no re-link when two disabled resources share the rule', async (t) => {
  const { fake } = t.context;
  const store = await discoverBase(fake);
  const grafana = store.get('2-grafana-router')!;
  store.set('old-grafana', {
    ...grafana,
    id: 'old-grafana',
    router: 'old-grafana@http',
    status: 'disabled',
    missing_since: T1,
  });
  const body = await pangolinBody(fake);
  const routers = (body.http as { routers: Record<string, unknown> }).routers;
  routers['12-Grafana-router'] = routers['2-Grafana-router'];
  delete routers['2-Grafana-router'];
  const result = reconcile([...store.values()], routersFromPangolin(body), options({ now: T2 }));
  t.deepEqual(
    result.upserts.map((resource) => [resource.id, resource.status]),
    [
      ['12-grafana-router', 'active'],
      ['2-grafana-router', 'disabled'],
    ],
  );
});

test.serial('an empty answer after a non-empty one changes nothing until N empties in a row', async (t) => {
  const { fake } = t.context;
  const store = await discoverBase(fake);
  const empty = routersFromPangolin(await pangolinBody(fake, 'traefik-config-empty.json'));
  t.deepEqual(empty, []);

  let streak = 0;
  for (const expectedStreak of [1, 2]) {
    const held = reconcile([...store.values()], empty, options({ now: T2, emptyStreak: streak }));
    t.deepEqual(held, { upserts: [], newEmptyStreak: expectedStreak, suspiciousEmpty: true, applied: false });
    streak = held.newEmptyStreak;
  }
  const confirmed = reconcile([...store.values()], empty, options({ now: T3, emptyStreak: streak }));
  t.like(confirmed, { newEmptyStreak: 3, suspiciousEmpty: true, applied: true });
  t.deepEqual(
    confirmed.upserts.map((resource) => [resource.id, resource.status, resource.missing_since]),
    BASE_IDS.map((id) => [id, 'disabled', T3]),
  );

  apply(store, confirmed.upserts);
  const back = reconcile(
    [...store.values()],
    routersFromPangolin(await pangolinBody(fake)),
    options({ now: T3, emptyStreak: 3, lastWasNonEmpty: false }),
  );
  t.is(back.newEmptyStreak, 0);
  t.deepEqual(
    back.upserts.map((resource) => resource.status),
    ['active', 'active', 'active', 'active'],
  );
});

test.serial('a non-empty answer resets the empty streak', async (t) => {
  const store = await discoverBase(t.context.fake);
  const result = reconcile(
    [...store.values()],
    routersFromPangolin(await pangolinBody(t.context.fake)),
    options({ emptyStreak: 2 }),
  );
  t.like(result, { newEmptyStreak: 0, applied: true, suspiciousEmpty: false });
});

test.serial('an empty answer with nothing discovered is no alarm', async (t) => {
  const empty = routersFromPangolin(await pangolinBody(t.context.fake, 'traefik-config-empty.json'));
  t.deepEqual(reconcile([], empty, options({ lastWasNonEmpty: false })), {
    upserts: [],
    newEmptyStreak: 1,
    suspiciousEmpty: false,
    applied: true,
  });
});

test.serial('exclude globs are matched against the key without provider', async (t) => {
  const routers = routersFromPangolin(await pangolinBody(t.context.fake));
  t.is(reconcile([], routers, options({ exclude: [] })).upserts.length, 7);
  t.deepEqual(
    reconcile([], routers, options({ exclude: ['*-redirect', '3-*', '*@http'] })).upserts.map(
      (resource) => resource.id,
    ),
    ['1-nextcloud-router', '2-grafana-router', '6-jellyfin-media-router'],
  );
});

test.serial('Traefik mode: internal routers and our own routers are skipped', async (t) => {
  const items = await traefikRouters(t.context.fake);
  const result = reconcile(
    [],
    routersFromTraefik(items),
    options({ source: 'traefik', isOwnRouter: ownObjectMatcher(['ws-router'], 'file') }),
  );
  t.deepEqual(
    result.upserts.map((resource) => resource.router),
    [
      '1-Nextcloud-router@http',
      '2-Grafana-router@http',
      '3-5e2f283f21admin29-regex-Wiki-router@http',
      '6-Jellyfin-Media-router@http',
      'api-router@file',
      'next-router@file',
    ],
  );
  t.like(result.upserts[0], {
    source: 'traefik',
    upstream_middlewares: ['crowdsec@file', 'badger@http'],
    upstream_service: '1-Nextcloud-service',
    // the list's added options "default" is the same as none
    tls: { cert_resolver: 'letsencrypt', domains: null, options: null },
  });
});

test.serial('MaxInt64 priorities stay exact from the Traefik API to the resource', async (t) => {
  const items = await traefikRouters(t.context.fake);
  const routers = routersFromTraefik(items);
  t.is(routers.find((router) => router.key === 'ping@internal')?.priority, 9223372036854775807n);
  t.is(routers.find((router) => router.key === 'dashboard@internal')?.priority, 9223372036854775805n);
  // a non-internal router with such a priority becomes a resource with the exact value
  const next = items.find((item) => item.name === 'next-router@file')!;
  next.priority = 9223372036854775806n;
  next.priorityStr = '9223372036854775806';
  const result = reconcile([], routersFromTraefik(items), options({ source: 'traefik' }));
  t.is(result.upserts.find((resource) => resource.id === 'next-router')?.priority, 9223372036854775806n);
});

test.serial('Pangolin and Traefik mode see the same keys, so switching keeps the resources', async (t) => {
  const store = await discoverBase(t.context.fake);
  const result = reconcile(
    [...store.values()],
    routersFromTraefik(await traefikRouters(t.context.fake)),
    options({ source: 'traefik', now: T2 }),
  );
  const created = result.upserts.filter((resource) => !store.has(resource.id)).map((resource) => resource.id);
  t.deepEqual(created, ['api-router', 'next-router', 'ws-router']);
  t.true(
    result.upserts
      .filter((resource) => store.has(resource.id))
      .every((resource) => resource.source === 'traefik' && resource.status === 'active'),
  );
});

test('resource ids: slug of the name, then -<provider>, then -2…', (t) => {
  const taken: ResourceRecord = {
    ...reconcile([], routersFromTraefik([{ name: 'zzz@file', rule: 'Path(`/z`)' }]), options()).upserts[0],
    id: 'web',
  };
  const list = [
    'App@docker',
    'app@file',
    'APP@file',
    'Café Ünïcode Straße@docker',
    '!!!@docker',
    '???@docker',
    '***@docker',
    'Web@docker',
    `${'x'.repeat(70)}@docker`,
    `${'x'.repeat(70)}@file`,
  ].map((name, i) => ({ name, rule: `Path(\`/${i}\`)` }));
  const ids = reconcile([taken], routersFromTraefik(list), options({ source: 'traefik' })).upserts.map(
    (resource) => resource.id,
  );
  t.deepEqual(ids, [
    'app',
    'app-2',
    'app-file',
    'cafe-unicode-stra-e',
    'resource',
    'resource-2',
    'resource-docker',
    'web', // the existing one, now disabled
    'web-docker',
    `${'x'.repeat(58)}-file`,
    'x'.repeat(63),
  ]);
  t.is(slugify('---', 'resource'), 'resource');
  t.is(slugify('Ｆｕｌｌｗｉｄｔｈ Ｎａｍｅ', 'resource'), 'fullwidth-name');
});

test('hosts: every Host value, lists and || included, HostRegexp and HostSNI ignored', (t) => {
  t.deepEqual(hostsOf('Host(`a.example.com`) || Host(`b.example.com`) && PathPrefix(`/x`)'), [
    'a.example.com',
    'b.example.com',
  ]);
  t.deepEqual(hostsOf('Host(`a.example.com`, `c.example.com`) || Host("d.example.com")'), [
    'a.example.com',
    'c.example.com',
    'd.example.com',
  ]);
  t.deepEqual(
    hostsOf('HostRegexp(`^.+\\.example\\.com$`) || HostSNI(`x`) || Host(`a.example.com`) || Host(`a.example.com`)'),
    ['a.example.com'],
  );
  t.deepEqual(hostsOf('PathPrefix(`/`)'), []);
  const [router] = routersFromPangolin({ http: { routers: { r: { rule: 'PathPrefix(`/`)', service: 's' } } } });
  t.like(reconcile([], [router], options()).upserts[0], {
    host: null,
    hosts: [],
    priority: null,
    entrypoints: [],
    tls: null,
  });
});

test('priorities: priorityStr wins; a never computed priority is null', (t) => {
  t.is(exactPriority({ priority: 9223372036854776000, priorityStr: '9223372036854775807' }), 9223372036854775807n);
  t.is(exactPriority({ priorityStr: '0' }), null);
  t.is(exactPriority({ priority: 0, priorityStr: '0' }), 0);
  t.is(exactPriority({ priority: -1 }), -1);
  t.is(exactPriority({ priority: 9007199254740993n }), 9007199254740993n);
  t.is(exactPriority({ priority: 42n }), 42);
  t.is(exactPriority({}), null);
});

test('tls domains and options are normalised', (t) => {
  const [router] = routersFromTraefik([
    {
      name: 'r@file',
      rule: 'Host(`x`)',
      tls: { options: 'modern', domains: [{ main: 'example.com', sans: ['*.example.com'] }, { main: 'example.org' }] },
    },
  ]);
  t.deepEqual(router.tls, {
    cert_resolver: null,
    domains: [
      { main: 'example.com', sans: ['*.example.com'] },
      { main: 'example.org', sans: [] },
    ],
    options: 'modern',
  });
});

test('ownObjectMatcher recognises what our provider emits', (t) => {
  const own = ownObjectMatcher(['app'], 'http');
  t.true(own('app@http'));
  t.true(own('app_tcp@http'));
  t.true(own('sm_mtls_verify@http'));
  t.false(own('app@docker'));
  t.false(own('1-App-router@http'));
});

test.serial('discovered services from Pangolin: every http, tcp and udp service', async (t) => {
  const services = discoveredServicesFrom(servicesFromPangolin(await pangolinBody(t.context.fake)));
  t.deepEqual(
    services.map((service) => [service.id, service.protocol]),
    [
      ['1-nextcloud-service', 'http'],
      ['2-grafana-service', 'http'],
      ['3-5e2f283f21admin29-regex-wiki-service', 'http'],
      ['6-jellyfin-media-service', 'http'],
      ['4-ssh-service', 'tcp'],
      ['5-postgres-service', 'tcp'],
      ['7-bedrock-service', 'udp'],
    ],
  );
  t.deepEqual(services[1], {
    id: '2-grafana-service',
    name: '2-Grafana-service',
    protocol: 'http',
    type: 'loadBalancer',
    config: { servers: [{ url: 'http://100.89.128.8:46211' }, { url: 'http://100.89.128.12:58904' }] },
    provider: 'http',
    upstream_name: '2-Grafana-service@http',
    status: 'active',
  });
});

test.serial('discovered services from Traefik: internal and our own left out, collisions suffixed', async (t) => {
  const result = await fetchTraefikServices(source(t.context.fake, 'traefik'));
  if (!result.ok) return t.fail(result.error);
  const upstream = servicesFromTraefik(result);
  const services = discoveredServicesFrom(upstream, {
    isOwnService: ownObjectMatcher(['next-service'], 'file'),
    takenIds: ['4-ssh-service'],
  });
  t.deepEqual(
    services.map((service) => service.upstream_name),
    [
      '1-Nextcloud-service@http',
      '2-Grafana-service@http',
      '3-5e2f283f21admin29-regex-Wiki-service@http',
      '6-Jellyfin-Media-service@http',
      'api-service@file',
      '4-SSH-service@http',
      '5-Postgres-service@http',
      '7-Bedrock-service@http',
    ],
  );
  t.is(services.find((service) => service.upstream_name === '4-SSH-service@http')?.id, '4-ssh-service-http');
  t.like(
    services.find((service) => service.id === 'api-service'),
    { provider: 'file', type: 'loadBalancer', protocol: 'http' },
  );

  const clash = discoveredServicesFrom(
    servicesFromTraefik({
      http: [
        { name: 'web@file', loadBalancer: { servers: [] } },
        { name: 'web@docker', loadBalancer: { servers: [] } },
        { name: 'Web@docker', weighted: { services: [] } },
        { name: 'WEB@file', failover: { service: 'web' } },
        { name: 'api@internal' },
      ],
    }),
  );
  // processed in key order so the ids are the same on every sync
  t.deepEqual(
    clash.map((service) => [service.id, service.upstream_name, service.type]),
    [
      ['web', 'WEB@file', 'failover'],
      ['web-docker', 'Web@docker', 'weighted'],
      ['web-2', 'web@docker', 'loadBalancer'],
      ['web-file', 'web@file', 'loadBalancer'],
    ],
  );
});

test('routers keep their upstream order-independent ids across syncs', (t) => {
  const routers: UpstreamRouter[] = routersFromTraefik([
    { name: 'b@file', rule: 'Host(`b`)' },
    { name: 'a@file', rule: 'Host(`a`)' },
  ]);
  const first = reconcile([], routers, options({ source: 'traefik' }));
  const second = reconcile(first.upserts, [...routers].reverse(), options({ source: 'traefik', now: T2 }));
  t.deepEqual(second.upserts, []);
});
