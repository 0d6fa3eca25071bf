/**
 * POST /api/import/middleware-manager (API.md §4.24) on a real app whose resources come from the
 * fake Pangolin, with databases made in the test in middleware-manager's schema.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { call, harness, resourceFiles } from '../resources/support.ts';
import { bearer, initialAdminToken } from '../auth/support.ts';
import { mmDatabase, otherDatabase, type MmContent } from './mm-db.ts';

const URL = '/api/import/middleware-manager';

const post = (app: FastifyInstance, bytes: Buffer, query = '', headers: Record<string, string> = {}) =>
  call(app, {
    method: 'POST',
    url: `${URL}${query}`,
    headers: { 'content-type': 'application/octet-stream', ...headers },
    payload: bytes,
  });

/** A database like a middleware-manager user's: templates, a chain, one invalid and one TCP-only middleware. */
const CONTENT: MmContent = {
  middlewares: [
    {
      id: 'authelia',
      name: 'Authelia',
      type: 'forwardAuth',
      config: { address: 'http://authelia:9091/api/authz/forward-auth', trustForwardHeader: true },
    },
    { id: 'rate-limit', name: 'Rate Limit', type: 'rateLimit', config: { average: 100, burst: 50 } },
    {
      id: 'secure-chain',
      name: 'Secure chain',
      type: 'chain',
      config: { middlewares: ['rate-limit@file', 'authelia@file', 'badger@http'] },
    },
    { id: 'broken', name: 'Broken', type: 'rateLimit', config: { average: 'lots' } },
    { id: 'conn-limit', name: 'Conn limit', type: 'inFlightConn', config: { amount: 10 } },
    { id: 'not-json', name: 'Not JSON', type: 'headers', config: '{customRequestHeaders: ' },
  ],
  services: [
    { id: 'backend', name: 'Backend', type: 'loadBalancer', config: { servers: [{ url: 'http://10.0.0.5:8080' }] } },
    { id: 'ssh', name: 'SSH', type: 'loadBalancer', config: { servers: [{ address: '10.0.0.7:22' }] } },
  ],
  resources: [
    {
      id: '1-Nextcloud-router',
      host: 'cloud.example.com',
      entrypoints: 'websecure',
      tls_domains: 'www.cloud.example.com',
      custom_headers: JSON.stringify({ 'X-Forwarded-Proto': 'https' }),
      router_priority: 300,
    },
    // renumbered by Pangolin since: found by host
    { id: '9-grafana-router-old', host: 'grafana.example.com', router_priority: 100 },
    { id: '7-ghost-router', host: 'ghost.example.com' },
  ],
  assignments: [
    { resource_id: '1-Nextcloud-router', middleware_id: 'authelia', priority: 150 },
    { resource_id: '1-Nextcloud-router', middleware_id: 'secure-chain', priority: 120 },
    { resource_id: '1-Nextcloud-router', middleware_id: 'broken' },
    { resource_id: '9-grafana-router-old', middleware_id: 'rate-limit', priority: 200 },
    { resource_id: '7-ghost-router', middleware_id: 'authelia' },
  ],
  serviceAssignments: [{ resource_id: '9-grafana-router-old', service_id: 'backend' }],
};

const byName = (skipped: Array<{ kind: string; name: string; reason: string }>, kind: string, name: string) =>
  skipped.find((s) => s.kind === kind && s.name === name);

async function dataFiles(dataDir: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const dir of ['middlewares', 'services'])
    out[dir] = await readdir(path.join(dataDir, dir)).catch(() => [] as string[]);
  return out;
}

test.serial('dry run writes nothing; the import creates and assigns; a second run skips everything', async (t) => {
  const { app, dataDir } = await harness(t);
  const bytes = await mmDatabase(CONTENT);
  const before = { files: await dataFiles(dataDir), resources: await resourceFiles(dataDir) };

  const dry = await post(app, bytes, '?dry_run=true');
  t.is(dry.status, 200, dry.raw);
  t.true(dry.body.dry_run);
  t.deepEqual(
    dry.body.created.middlewares.map((m: { id: string }) => m.id),
    ['authelia', 'rate-limit', 'secure-chain'],
  );
  t.deepEqual(dry.body.created.services, [
    { id: 'backend', name: 'Backend', type: 'loadBalancer', protocol: 'http', from: 'backend' },
    { id: 'ssh', name: 'SSH', type: 'loadBalancer', protocol: 'tcp', from: 'ssh' },
  ]);
  t.deepEqual(dry.body.created.assignments, [
    {
      resource_id: '1-nextcloud-router',
      kind: 'middleware',
      id: 'authelia',
      priority: 150,
      from: '1-Nextcloud-router',
    },
    {
      resource_id: '1-nextcloud-router',
      kind: 'middleware',
      id: 'secure-chain',
      priority: 120,
      from: '1-Nextcloud-router',
    },
    {
      resource_id: '2-grafana-router',
      kind: 'middleware',
      id: 'rate-limit',
      priority: 200,
      from: '9-grafana-router-old',
    },
    { resource_id: '2-grafana-router', kind: 'service', id: 'backend', priority: null, from: '9-grafana-router-old' },
  ]);
  // entrypoints equal upstream's and priority 100 (the column default) carry nothing
  t.deepEqual(
    dry.body.created.overrides.map((o: { resource_id: string; kind: string; config: unknown }) => [
      o.resource_id,
      o.kind,
      o.config,
    ]),
    [
      ['1-nextcloud-router', 'tls', { domains: [{ main: 'cloud.example.com', sans: ['www.cloud.example.com'] }] }],
      ['1-nextcloud-router', 'headers', { request: { 'X-Forwarded-Proto': 'https' } }],
      ['1-nextcloud-router', 'priority', { priority: 300 }],
    ],
  );
  t.regex(byName(dry.body.skipped, 'middleware', 'Broken')!.reason, /average/);
  t.regex(byName(dry.body.skipped, 'middleware', 'Conn limit')!.reason, /type inFlightConn is not supported/);
  t.regex(byName(dry.body.skipped, 'middleware', 'Not JSON')!.reason, /not valid JSON/);
  t.regex(byName(dry.body.skipped, 'assignment', '1-nextcloud-router ← broken')!.reason, /not imported/);
  t.regex(
    byName(dry.body.skipped, 'resource', '7-ghost-router')!.reason,
    /no resource has router 7-ghost-router or host ghost\.example\.com/,
  );
  t.true(dry.body.warnings.some((w: string) => /SSH.*tcp service/.test(w)));
  t.deepEqual(
    { files: await dataFiles(dataDir), resources: await resourceFiles(dataDir) },
    before,
    'dry run wrote nothing',
  );

  const real = await post(app, bytes);
  t.is(real.status, 200, real.raw);
  t.false(real.body.dry_run);
  t.deepEqual({ ...real.body, dry_run: true }, dry.body, 'the real run did what the dry run said');

  const chain = (await call(app, { url: '/api/middlewares/secure-chain' })).body;
  t.deepEqual(chain.config, { middlewares: ['rate-limit', 'authelia', 'badger@http'] });
  t.is(chain.description, 'imported from middleware-manager (its id secure-chain)');
  t.is((await call(app, { url: '/api/services/ssh' })).body.protocol, 'tcp');
  const nextcloud = (await call(app, { url: '/api/resources/1-nextcloud-router' })).body;
  t.deepEqual(nextcloud.middlewares, [
    { id: 'authelia', priority: 150 },
    { id: 'secure-chain', priority: 120 },
  ]);
  t.deepEqual(nextcloud.config.headers.request, { 'X-Forwarded-Proto': 'https' });
  t.deepEqual(nextcloud.config.tls.domains, [{ main: 'cloud.example.com', sans: ['www.cloud.example.com'] }]);
  t.is(nextcloud.config.priority.priority, 300);
  const grafana = (await call(app, { url: '/api/resources/2-grafana-router' })).body;
  t.is(grafana.service_id, 'backend');

  // the provider document Traefik reads
  const doc = (await call(app, { url: '/api/v1/proxy-config' })).body;
  t.deepEqual(doc.http.middlewares.authelia, { forwardAuth: CONTENT.middlewares![0].config });
  t.deepEqual(doc.http.middlewares['secure-chain'], {
    chain: { middlewares: ['rate-limit', 'authelia', 'badger@http'] },
  });
  const router = doc.http.routers['1-Nextcloud-router'];
  t.is(router.priority, 300);
  t.deepEqual(router.tls.domains, [{ main: 'cloud.example.com', sans: ['www.cloud.example.com'] }]);
  t.true(router.middlewares.includes('authelia'), JSON.stringify(router.middlewares));
  t.true(router.middlewares.includes('secure-chain'));
  t.is(doc.http.routers['2-Grafana-router'].service, 'backend');
  t.deepEqual(doc.http.services.backend, { loadBalancer: { servers: [{ url: 'http://10.0.0.5:8080' }] } });

  const again = await post(app, bytes);
  t.is(again.status, 200, again.raw);
  t.deepEqual(again.body.created, { middlewares: [], services: [], assignments: [], overrides: [] });
  t.regex(byName(again.body.skipped, 'middleware', 'Authelia')!.reason, /exists \(authelia\); assignments use it/);
  t.regex(byName(again.body.skipped, 'assignment', '1-nextcloud-router ← authelia')!.reason, /already assigned/);
  t.regex(byName(again.body.skipped, 'override', '1-nextcloud-router priority')!.reason, /already set/);
  t.regex(byName(again.body.skipped, 'assignment', '2-grafana-router ← backend')!.reason, /already assigned/);
});

test.serial('a write that fails after validation rolls back every earlier write', async (t) => {
  const { app, dataDir } = await harness(t);
  const before = { files: await dataFiles(dataDir), resources: await resourceFiles(dataDir) };
  const services = [
    ...CONTENT.services!,
    { id: 'main', name: 'Main', type: 'loadBalancer', config: { servers: [{ url: 'http://10.0.0.8' }] } },
    // Traefik follows the health of a failover's main service: caught while planning
    { id: 'failover', name: 'Failover', type: 'failover', config: { service: 'main@file', fallback: 'backend@file' } },
    // a mirroring service follows its main service's health too: the services group sees that only
    // when its batch write checks `outer` after `mirror`, once the middlewares were written (they
    // are removed again)
    { id: 'mirror', name: 'Mirror', type: 'mirroring', config: { service: 'main@file', healthCheck: {} } },
    { id: 'outer', name: 'Outer', type: 'failover', config: { service: 'mirror@file', fallback: 'backend@file' } },
  ];
  const bytes = await mmDatabase({ ...CONTENT, services });
  const dry = await post(app, bytes, '?dry_run=1');
  t.is(dry.status, 200, dry.raw);
  t.regex(byName(dry.body.skipped, 'service', 'Failover')!.reason, /health of main, which has no healthCheck/);
  t.deepEqual(
    dry.body.created.services.map((s: { id: string }) => s.id),
    ['backend', 'main', 'mirror', 'outer', 'ssh'],
  );
  const real = await post(app, bytes);
  t.is(real.status, 422, real.raw);
  t.is(real.body.id, 'validation_failed');
  t.regex(real.body.message, /^import rolled back, nothing was kept: .*healthCheck/);
  t.deepEqual({ files: await dataFiles(dataDir), resources: await resourceFiles(dataDir) }, before);
  t.deepEqual((await call(app, { url: '/api/middlewares' })).body, []);
});

test.serial(
  'corrupt files, other databases, oversized and non-binary bodies are refused; nothing is written',
  async (t) => {
    const { app, dataDir } = await harness(t);
    const before = { files: await dataFiles(dataDir), resources: await resourceFiles(dataDir) };
    const good = await mmDatabase(CONTENT);
    const cases: Array<[string, Buffer, RegExp]> = [
      ['text', Buffer.from('id,name\nauthelia,Authelia\n'.repeat(10)), /not a SQLite database/],
      [
        'header only',
        Buffer.concat([good.subarray(0, 100), Buffer.alloc(4096, 0xff)]),
        /SQLite cannot|not a middleware-manager database/,
      ],
      ['truncated', good.subarray(0, Math.floor(good.length / 2)), /SQLite cannot|not a middleware-manager/],
      [
        'other tables',
        await otherDatabase(),
        /missing column middlewares\.name.*table resources, table resource_middlewares/,
      ],
    ];
    for (const [label, bytes, message] of cases) {
      const r = await post(app, bytes);
      t.is(r.status, 422, `${label}: ${r.raw}`);
      t.is(r.body.id, 'invalid_database', label);
      t.regex(r.body.message, message, label);
    }
    const json = await call(app, { method: 'POST', url: URL, payload: { middlewares: [] } });
    t.is(json.status, 415, json.raw);
    const empty = await call(app, {
      method: 'POST',
      url: URL,
      headers: { 'content-type': 'application/octet-stream' },
    });
    t.is(empty.status, 422, empty.raw);
    const huge = await post(app, Buffer.concat([good, Buffer.alloc(100 * 1024 * 1024)]));
    t.is(huge.status, 413, huge.raw.slice(0, 200));
    t.is(huge.body.id, 'payload_too_large');
    t.deepEqual({ files: await dataFiles(dataDir), resources: await resourceFiles(dataDir) }, before);
  },
);

test.serial(
  'an older database (no services tables, no mtls columns) imports; with auth mode all operators get 403',
  async (t) => {
    const { app } = await harness(t, { config: { auth: { mode: 'all' } } });
    const admin = bearer(await initialAdminToken(app));
    const created = await call(app, {
      method: 'POST',
      url: '/api/auth/tokens',
      headers: admin,
      payload: { name: 'ops', role: 'operator' },
    });
    const bytes = await mmDatabase({
      legacy: true,
      middlewares: CONTENT.middlewares!.slice(0, 2),
      resources: [
        {
          id: '2-Grafana-router',
          host: 'grafana.example.com',
          router_priority: 200,
          tcp_enabled: 1,
          tcp_sni_rule: 'HostSNI(`grafana.example.com`)',
        },
      ],
      assignments: [{ resource_id: '2-Grafana-router', middleware_id: 'rate-limit' }],
    });
    const refused = await post(app, bytes, '', bearer(created.body.token));
    t.is(refused.status, 403, refused.raw);
    const anonymous = await post(app, bytes);
    t.is(anonymous.status, 401, anonymous.raw);
    const r = await post(app, bytes, '', admin);
    t.is(r.status, 200, r.raw);
    t.true(r.body.warnings.some((w: string) => /no services table/.test(w)));
    t.deepEqual(r.body.created.assignments, [
      {
        resource_id: '2-grafana-router',
        kind: 'middleware',
        id: 'rate-limit',
        priority: 200,
        from: '2-Grafana-router',
      },
    ]);
    t.deepEqual(r.body.created.overrides, [
      {
        resource_id: '2-grafana-router',
        kind: 'tcp',
        config: { enabled: true, entrypoints: ['tcp'], sni_rule: 'HostSNI(`grafana.example.com`)', service_id: null },
        from: '2-Grafana-router',
      },
    ]);
    const grafana = (await call(app, { url: '/api/resources/2-grafana-router', headers: admin })).body;
    t.like(grafana.config.tcp, { enabled: true, sni_rule: 'HostSNI(`grafana.example.com`)' });
  },
);
