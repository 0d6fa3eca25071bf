/**
 * Own resources (API.md §4.24): POST/PUT/DELETE /api/resources with `source: local`, every error,
 * the service `servers` makes, hand-written local files, and discovery leaving them alone.
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { waitFor } from '../helpers/wait.ts';
import {
  assertClientError,
  call,
  createMiddleware,
  createService,
  GRAFANA,
  harness,
  resourceFiles,
} from './support.ts';

/** Saves a file as editors do (write a temp file, rename it over): the watcher never sees half a file. */
async function saveByHand(file: string, text: string): Promise<void> {
  await writeFile(`${file}.edit.tmp`, text);
  await rename(`${file}.edit.tmp`, file);
}

const headers = { id: 'hdr', name: 'Headers', type: 'headers', config: { customResponseHeaders: { 'X-Own': 'yes' } } };

test.serial('POST /api/resources with hosts and servers creates a local resource and its <id>-service', async (t) => {
  const { app, dataDir } = await harness(t);
  await createMiddleware(t, app, headers);
  const created = await call(app, {
    method: 'POST',
    url: '/api/resources',
    payload: {
      name: 'Internal dashboard',
      hosts: ['dash.internal.test', 'dash2.internal.test'],
      path_prefix: '/ui',
      servers: ['http://10.0.0.9:8080'],
      middlewares: [{ middleware_id: 'hdr', priority: 200 }],
    },
  });
  t.is(created.status, 201, created.raw);
  t.is(created.headers.location, '/api/resources/internal-dashboard');
  t.like(created.body, {
    id: 'internal-dashboard',
    name: 'Internal dashboard',
    source: 'local',
    status: 'active',
    router: 'internal-dashboard@http',
    rule: '(Host(`dash.internal.test`) || Host(`dash2.internal.test`)) && PathPrefix(`/ui`)',
    host: 'dash.internal.test',
    path_prefix: '/ui',
    entrypoints: ['websecure'],
    tls: { cert_resolver: null, domains: null, options: null },
    service_id: 'internal-dashboard-service',
    effective_service: 'internal-dashboard-service',
    effective_middlewares: ['hdr'],
    emitted: true,
    warnings: [],
  });
  t.deepEqual(created.body.hosts, ['dash.internal.test', 'dash2.internal.test']);
  t.deepEqual(created.body.middlewares, [{ id: 'hdr', priority: 200 }]);
  const service = await call(app, { url: '/api/services/internal-dashboard-service' });
  t.is(service.status, 200);
  t.like(service.body, { type: 'loadBalancer', protocol: 'http', source: 'manual' });
  t.deepEqual(service.body.config, { servers: [{ url: 'http://10.0.0.9:8080' }] });
  t.deepEqual(service.body.used_by, ['/api/resources/internal-dashboard']);

  // the file holds what one would write by hand
  const file = parse(await readFile(path.join(dataDir, 'resources', 'internal-dashboard.yaml'), 'utf8'));
  t.like(file, { name: 'Internal dashboard', source: 'local', path_prefix: '/ui' });
  t.deepEqual(file.hosts, ['dash.internal.test', 'dash2.internal.test']);
  t.false('router' in file);
  t.false('upstream_service' in file);

  // the provider document has the router
  const doc = await waitFor(async () => {
    const r = await call(app, { url: '/api/v1/proxy-config' });
    return r.body?.http?.routers?.['internal-dashboard'] ? r.body : null;
  }, 2000);
  t.deepEqual(doc.http.routers['internal-dashboard'], {
    entryPoints: ['websecure'],
    middlewares: ['hdr'],
    rule: '(Host(`dash.internal.test`) || Host(`dash2.internal.test`)) && PathPrefix(`/ui`)',
    service: 'internal-dashboard-service',
    tls: {},
  });
  t.deepEqual(doc.http.services['internal-dashboard-service'], {
    loadBalancer: { servers: [{ url: 'http://10.0.0.9:8080' }] },
  });
  // Pangolin's routers are still served next to it
  t.truthy(doc.http.routers['1-Nextcloud-router']);
  const local = await call(app, { url: '/api/resources?source=local' });
  t.deepEqual(
    local.body.map((r: { id: string }) => r.id),
    ['internal-dashboard'],
  );
});

test.serial('POST with a rule, an existing service, web only, tls off and a priority', async (t) => {
  const { app } = await harness(t);
  await createService(t, app, {
    id: 'legacy',
    name: 'Legacy',
    type: 'loadBalancer',
    config: { servers: [{ url: 'http://10.0.0.8' }] },
  });
  const created = await call(app, {
    method: 'POST',
    url: '/api/resources',
    payload: {
      id: 'redirect-host',
      name: 'Redirect host',
      rule: 'Host(`old.example.com`) && PathPrefix(`/a`)',
      entrypoints: ['web'],
      service_id: 'legacy',
      priority: 500,
    },
  });
  t.is(created.status, 201, created.raw);
  t.like(created.body, { tls: null, priority: 500, path_prefix: null, service_id: 'legacy', host: 'old.example.com' });
  const doc = (await call(app, { url: '/api/v1/proxy-config' })).body;
  t.deepEqual(doc.http.routers['redirect-host'], {
    entryPoints: ['web'],
    priority: 500,
    rule: 'Host(`old.example.com`) && PathPrefix(`/a`)',
    service: 'legacy',
  });
  // with a certificate resolver and domains
  const withTls = await call(app, {
    method: 'POST',
    url: '/api/resources',
    payload: {
      name: 'Tls',
      hosts: ['tls.example.com'],
      service_id: 'legacy',
      tls: { cert_resolver: 'letsencrypt', domains: [{ main: 'example.com', sans: ['*.example.com'] }] },
    },
  });
  t.is(withTls.status, 201, withTls.raw);
  const doc2 = (await call(app, { url: '/api/v1/proxy-config' })).body;
  t.deepEqual(doc2.http.routers.tls.tls, {
    certResolver: 'letsencrypt',
    domains: [{ main: 'example.com', sans: ['*.example.com'] }],
  });
});

test.serial(
  'POST errors: 409 already_exists, 404 unknown service or middleware, 422 bad input; nothing written',
  async (t) => {
    const { app, dataDir } = await harness(t);
    const ok = { name: 'X', hosts: ['x.test'], servers: ['http://127.0.0.1:1'] };
    const post = (payload: Record<string, unknown>) => call(app, { method: 'POST', url: '/api/resources', payload });
    t.is((await post({ ...ok, id: 'x' })).status, 201);
    const before = await resourceFiles(dataDir);
    const services = (await call(app, { url: '/api/services?source=manual' })).body.length;

    assertClientError(t, await post({ ...ok, id: 'x' }), 409, 'already_exists');
    // a discovered resource's id is taken too
    assertClientError(t, await post({ ...ok, id: GRAFANA }), 409, 'already_exists');
    assertClientError(t, await post({ ...ok, id: 'y', servers: undefined, service_id: 'nope' }), 404, 'not_found');
    assertClientError(t, await post({ ...ok, id: 'y', middlewares: [{ middleware_id: 'nope' }] }), 404, 'not_found');
    const bad: Array<[string, Record<string, unknown>]> = [
      ['hosts and rule', { ...ok, rule: 'Host(`x.test`)' }],
      ['neither hosts nor rule', { name: 'X', servers: ['http://a'] }],
      ['invalid host', { ...ok, hosts: ['bad host'] }],
      ['wildcard host', { ...ok, hosts: ['*.x.test'] }],
      ['empty hosts', { ...ok, hosts: [] }],
      ['21 hosts', { ...ok, hosts: Array.from({ length: 21 }, (_, i) => `h${i}.test`) }],
      ['duplicate host', { ...ok, hosts: ['a.test', 'A.test'] }],
      ['relative URL', { ...ok, servers: ['10.0.0.1:80'] }],
      ['ftp URL', { ...ok, servers: ['ftp://10.0.0.1'] }],
      ['URL with a query', { ...ok, servers: ['http://10.0.0.1/?a=1'] }],
      ['service_id and servers', { ...ok, service_id: 'legacy' }],
      ['no service', { name: 'X', hosts: ['x.test'] }],
      ['unbalanced rule', { name: 'X', rule: 'Host(`a.test`', servers: ['http://a'] }],
      ['unterminated quote', { name: 'X', rule: 'Host(`a.test)', servers: ['http://a'] }],
      ['path_prefix with a rule', { name: 'X', rule: 'Host(`a.test`)', path_prefix: '/p', servers: ['http://a'] }],
      ['path_prefix without /', { ...ok, path_prefix: 'p' }],
      ['bad entry point', { ...ok, entrypoints: ['web secure'] }],
      ['blank name', { ...ok, name: '   ' }],
      ['bad id', { ...ok, id: 'Not A Slug' }],
      ['priority 0', { ...ok, priority: 0 }],
    ];
    for (const [what, payload] of bad) {
      const reply = await post({ id: 'y', ...payload });
      t.is(reply.status, 422, `${what}: ${reply.raw}`);
      t.is(reply.body.id, 'validation_failed', what);
    }
    t.deepEqual(await resourceFiles(dataDir), before);
    t.is((await call(app, { url: '/api/services?source=manual' })).body.length, services);
    t.false(existsSync(path.join(dataDir, 'services', 'y-service.yaml')));
  },
);

test.serial(
  'PUT replaces a local resource (sub-route overrides kept); 409 not_local on a discovered one',
  async (t) => {
    const { app } = await harness(t);
    await createMiddleware(t, app, headers);
    await createService(t, app, {
      id: 'other',
      name: 'Other',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://o' }] },
    });
    const created = await call(app, {
      method: 'POST',
      url: '/api/resources',
      payload: { id: 'app', name: 'App', hosts: ['app.test'], servers: ['http://10.0.0.1'] },
    });
    t.is(created.status, 201, created.raw);
    const headersSet = await call(app, {
      method: 'PUT',
      url: '/api/resources/app/config/headers',
      payload: { request: { 'X-From': 'sm' } },
    });
    t.is(headersSet.status, 200, headersSet.raw);
    t.deepEqual(headersSet.body.effective_middlewares, ['app_headers']);

    // servers again: the same service gets the new servers
    const put = await call(app, {
      method: 'PUT',
      url: '/api/resources/app',
      headers: { 'if-match': `"${headersSet.body.etag}"` },
      payload: {
        name: 'App 2',
        hosts: ['app2.test'],
        path_prefix: '/x',
        servers: ['http://10.0.0.2'],
        entrypoints: ['web'],
      },
    });
    t.is(put.status, 200, put.raw);
    t.like(put.body, {
      name: 'App 2',
      rule: 'Host(`app2.test`) && PathPrefix(`/x`)',
      tls: null,
      service_id: 'app-service',
    });
    t.deepEqual(put.body.config.headers.request, { 'X-From': 'sm' });
    t.deepEqual(put.body.effective_middlewares, ['app_headers']);
    const service = (await call(app, { url: '/api/services/app-service' })).body;
    t.deepEqual(service.config, { servers: [{ url: 'http://10.0.0.2' }] });

    // a stale If-Match is refused
    const stale = await call(app, {
      method: 'PUT',
      url: '/api/resources/app',
      headers: { 'if-match': `"${headersSet.body.etag}"` },
      payload: { name: 'App', hosts: ['app.test'], service_id: 'other' },
    });
    assertClientError(t, stale, 412, 'precondition_failed');

    // switching to service_id removes the service made for it (unused now)
    const switched = await call(app, {
      method: 'PUT',
      url: '/api/resources/app',
      payload: { name: 'App', hosts: ['app.test'], service_id: 'other', middlewares: [{ middleware_id: 'hdr' }] },
    });
    t.is(switched.status, 200, switched.raw);
    t.is(switched.body.effective_service, 'other');
    t.deepEqual(switched.body.effective_middlewares, ['app_headers', 'hdr']);
    t.is((await call(app, { url: '/api/services/app-service' })).status, 404);

    assertClientError(
      t,
      await call(app, {
        method: 'PUT',
        url: `/api/resources/${GRAFANA}`,
        payload: { name: 'G', hosts: ['g.test'], service_id: 'other' },
      }),
      409,
      'not_local',
    );
    assertClientError(
      t,
      await call(app, {
        method: 'PUT',
        url: '/api/resources/nothere',
        payload: { name: 'G', hosts: ['g.test'], service_id: 'other' },
      }),
      404,
      'not_found',
    );
    assertClientError(
      t,
      await call(app, {
        method: 'PUT',
        url: '/api/resources/app',
        payload: { id: 'other-id', name: 'G', hosts: ['g.test'], service_id: 'other' },
      }),
      422,
      'validation_failed',
    );
    // a local router needs its service
    assertClientError(t, await call(app, { method: 'DELETE', url: '/api/resources/app/service' }), 409, 'conflict');
  },
);

test.serial('DELETE removes an active local resource and its <id>-service unless something else uses it', async (t) => {
  const { app, dataDir } = await harness(t);
  const post = (payload: Record<string, unknown>) => call(app, { method: 'POST', url: '/api/resources', payload });
  t.is((await post({ id: 'one', name: 'One', hosts: ['one.test'], servers: ['http://10.0.0.1'] })).status, 201);
  t.is((await post({ id: 'two', name: 'Two', hosts: ['two.test'], servers: ['http://10.0.0.2'] })).status, 201);
  // three shares one's service
  t.is((await post({ id: 'three', name: 'Three', hosts: ['three.test'], service_id: 'one-service' })).status, 201);

  t.is((await call(app, { method: 'DELETE', url: '/api/resources/two' })).status, 204);
  t.false(existsSync(path.join(dataDir, 'resources', 'two.yaml')));
  t.is((await call(app, { url: '/api/services/two-service' })).status, 404);

  t.is((await call(app, { method: 'DELETE', url: '/api/resources/one' })).status, 204);
  const kept = await call(app, { url: '/api/services/one-service' });
  t.is(kept.status, 200);
  t.deepEqual(kept.body.used_by, ['/api/resources/three']);
  // a discovered active resource still cannot be deleted
  assertClientError(t, await call(app, { method: 'DELETE', url: `/api/resources/${GRAFANA}` }), 409, 'resource_active');
});

test.serial('sub-routes work on local resources; overlapping hosts at equal priority give a warning', async (t) => {
  const { app } = await harness(t);
  await createMiddleware(t, app, headers);
  // grafana.example.com is Pangolin's 2-Grafana-router at priority 100
  const created = await call(app, {
    method: 'POST',
    url: '/api/resources',
    payload: { id: 'graf', name: 'Graf', hosts: ['grafana.example.com'], servers: ['http://10.0.0.3'], priority: 100 },
  });
  t.is(created.status, 201, created.raw);
  t.is(created.body.warnings.length, 1, JSON.stringify(created.body.warnings));
  t.regex(created.body.warnings[0], /2-Grafana-router@http/);
  // another priority: no warning
  const moved = await call(app, {
    method: 'PUT',
    url: '/api/resources/graf/config/priority',
    payload: { priority: 101 },
  });
  t.is(moved.status, 200, moved.raw);
  t.deepEqual(moved.body.warnings, []);

  const assigned = await call(app, {
    method: 'POST',
    url: '/api/resources/graf/middlewares',
    payload: { middleware_id: 'hdr' },
  });
  t.is(assigned.status, 200, assigned.raw);
  const external = await call(app, {
    method: 'POST',
    url: '/api/resources/graf/external-middlewares',
    payload: { name: 'crowdsec@file', priority: 150 },
  });
  t.is(external.status, 200, external.raw);
  const doc = (await call(app, { url: '/api/v1/proxy-config' })).body;
  t.deepEqual(doc.http.routers.graf.middlewares, ['crowdsec@file', 'hdr']);
  t.is(doc.http.routers.graf.priority, 101);
  t.is((await call(app, { method: 'DELETE', url: '/api/resources/graf/middlewares/hdr' })).status, 204);
});

test.serial('a hand-written local file is a resource; discovery keeps it; a broken one is reported', async (t) => {
  const { app, dataDir } = await harness(t);
  await createService(t, app, {
    id: 'legacy',
    name: 'Legacy',
    type: 'loadBalancer',
    config: { servers: [{ url: 'http://l' }] },
  });
  await saveByHand(
    path.join(dataDir, 'resources', 'hand.yaml'),
    'name: By hand\nsource: local\nhosts: [hand.test]\npath_prefix: /h\nentrypoints: [web]\nservice_id: legacy\n',
  );
  const view = await waitFor(async () => {
    const r = await call(app, { url: '/api/resources/hand' });
    return r.status === 200 ? r.body : null;
  }, 2000);
  t.like(view, { source: 'local', status: 'active', rule: 'Host(`hand.test`) && PathPrefix(`/h`)', emitted: true });
  // syncs neither disable nor rewrite it, and never make a twin
  const before = await readFile(path.join(dataDir, 'resources', 'hand.yaml'), 'utf8');
  await app.resources.syncNow();
  await app.resources.syncNow();
  t.is(await readFile(path.join(dataDir, 'resources', 'hand.yaml'), 'utf8'), before);
  t.is((await call(app, { url: '/api/resources/hand' })).body.status, 'active');
  const doc = (await call(app, { url: '/api/v1/proxy-config' })).body;
  t.deepEqual(doc.http.routers.hand, {
    entryPoints: ['web'],
    rule: 'Host(`hand.test`) && PathPrefix(`/h`)',
    service: 'legacy',
  });
  // an edit by hand is taken (a local file is its definition)
  await saveByHand(
    path.join(dataDir, 'resources', 'hand.yaml'),
    'name: By hand\nsource: local\nrule: Host(`hand2.test`)\nentrypoints: [web]\nservice_id: legacy\n',
  );
  await waitFor(
    async () => ((await call(app, { url: '/api/resources/hand' })).body.rule === 'Host(`hand2.test`)' ? true : null),
    2000,
  );
  // neither rule nor hosts: an invalid file, listed, and no resource
  await writeFile(path.join(dataDir, 'resources', 'broken.yaml'), 'name: Broken\nsource: local\nservice_id: legacy\n');
  const invalid = await waitFor(
    () => app.store.invalidFiles().find((f) => f.path.endsWith(path.join('resources', 'broken.yaml'))),
    2000,
  );
  t.regex(invalid.message, /rule or hosts/);
  t.is((await call(app, { url: '/api/resources/broken' })).status, 404);
});

test.serial('data source mode none: PUT active none → 204, the document holds only our objects', async (t) => {
  const { app } = await harness(t);
  t.is(
    (
      await call(app, {
        method: 'POST',
        url: '/api/resources',
        payload: { id: 'own', name: 'Own', hosts: ['own.test'], servers: ['http://10.0.0.5'] },
      })
    ).status,
    201,
  );
  const switched = await call(app, { method: 'PUT', url: '/api/datasource/active', payload: { name: 'none' } });
  t.is(switched.status, 204, switched.raw);
  assertClientError(t, await call(app, { url: '/api/datasource/active' }), 404, 'not_found');
  const doc = await waitFor(async () => {
    const r = await call(app, { url: '/api/v1/proxy-config' });
    return r.status === 200 && !r.body.http.routers['1-Nextcloud-router'] ? r.body : null;
  }, 2000);
  t.deepEqual(Object.keys(doc.http.routers), ['own']);
  t.deepEqual(Object.keys(doc.http.services), ['own-service']);
  const status = (await call(app, { url: '/api/proxy-config/status' })).body;
  t.is(status.mode, 'none');
  // discovered resources stay, not emitted
  t.is((await call(app, { url: `/api/resources/${GRAFANA}` })).body.emitted, false);
  // the name is reserved
  assertClientError(
    t,
    await call(app, {
      method: 'PUT',
      url: '/api/datasource/none',
      payload: { type: 'traefik', url: 'http://127.0.0.1:9' },
    }),
    422,
    'validation_failed',
  );
});
