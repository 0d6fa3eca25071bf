import test from 'ava';
import { existsSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/wait.ts';
import {
  assertClientError,
  call,
  createMiddleware,
  createService,
  GRAFANA,
  harness,
  JELLYFIN,
  NEXTCLOUD,
  resourceFiles,
  WIKI,
  type Harness,
} from './support.ts';
import type { ExecutionContext } from 'ava';

/** The Pangolin fixture discovered, then switched to the changed config: GRAFANA is disabled. */
async function withDisabled(t: ExecutionContext): Promise<Harness> {
  const h = await harness(t);
  h.fake.state.pangolinFile = 'traefik-config-changed.json';
  await h.app.resources.syncNow();
  return h;
}

const rateLimit = { id: 'rate-limit', name: 'Rate limit', type: 'rateLimit', config: { average: 100, burst: 50 } };
const authelia = {
  id: 'authelia',
  name: 'Authelia',
  type: 'forwardAuth',
  config: { address: 'http://authelia:9091/api/authz/forward-auth' },
};

test.serial('GET /api/resources filters by status, source and q, and pages with X-Total-Count and Link', async (t) => {
  const { app } = await withDisabled(t);
  const ids = async (query: string) => (await call(app, { url: `/api/resources${query}` })).body.map((x: any) => x.id);
  t.deepEqual(await ids('?status=disabled'), [GRAFANA]);
  t.is((await ids('?status=active')).length, 4);
  t.is((await ids('?status=all')).length, 5);
  t.is((await ids('?source=pangolin')).length, 5);
  t.deepEqual(await ids('?source=traefik'), []);
  t.deepEqual(await ids('?q=MEDIA.example'), [JELLYFIN]);
  t.deepEqual(await ids('?q=nextcloud'), [NEXTCLOUD]);
  const page = await call(app, { url: '/api/resources?page=2&page_size=2&status=all' });
  t.is(page.headers['x-total-count'], '5');
  t.deepEqual(
    page.body.map((x: any) => x.id),
    [WIKI, JELLYFIN],
  );
  t.regex(String(page.headers.link), /rel="next".*rel="prev"/);
  t.deepEqual((await call(app, { url: '/api/resources?page=9&page_size=2' })).body, []);
  for (const bad of ['?status=gone', '?source=docker', '?page_size=0', '?page_size=1001', '?page=0']) {
    assertClientError(t, await call(app, { url: `/api/resources${bad}` }), 422, 'validation_failed');
  }
});

test.serial(
  'GET /api/resources/:id answers the Resource with its ETag, 304 on If-None-Match, 404 for an unknown id',
  async (t) => {
    const { app } = await harness(t);
    const r = await call(app, { url: `/api/resources/${NEXTCLOUD}` });
    t.is(r.status, 200);
    t.is(r.headers.etag, `"${r.body.etag}"`);
    t.regex(r.body.etag, /^[0-9a-f]{32}$/);
    t.truthy(r.body.created_at);
    t.is(
      (await call(app, { url: `/api/resources/${NEXTCLOUD}`, headers: { 'if-none-match': `"${r.body.etag}"` } }))
        .status,
      304,
    );
    t.is((await call(app, { method: 'HEAD', url: `/api/resources/${NEXTCLOUD}` })).status, 200);
    assertClientError(t, await call(app, { url: '/api/resources/no-such-resource' }), 404, 'not_found');
  },
);

test.serial(
  'DELETE /api/resources/:id answers 409 resource_active while active; a disabled one is deleted with its file',
  async (t) => {
    const { app, dataDir, fake } = await withDisabled(t);
    assertClientError(
      t,
      await call(app, { method: 'DELETE', url: `/api/resources/${NEXTCLOUD}` }),
      409,
      'resource_active',
    );
    assertClientError(
      t,
      await call(app, { method: 'DELETE', url: `/api/resources/${GRAFANA}`, headers: { 'if-match': '"0000"' } }),
      412,
      'precondition_failed',
    );
    const etag = (await call(app, { url: `/api/resources/${GRAFANA}` })).body.etag;
    t.is(
      (await call(app, { method: 'DELETE', url: `/api/resources/${GRAFANA}`, headers: { 'if-match': `"${etag}"` } }))
        .status,
      204,
    );
    t.false(existsSync(path.join(dataDir, 'resources', `${GRAFANA}.yaml`)));
    assertClientError(t, await call(app, { method: 'DELETE', url: `/api/resources/${GRAFANA}` }), 404, 'not_found');
    assertClientError(t, await call(app, { url: `/api/resources/${GRAFANA}` }), 404);
    // it comes back, as a new resource, when its router returns
    fake.state.pangolinFile = 'traefik-config.json';
    await app.resources.syncNow();
    t.like((await call(app, { url: `/api/resources/${GRAFANA}` })).body, { status: 'active', middlewares: [] });
  },
);

test.serial('POST /:id/middlewares upserts an assignment; priorities default to 100 and sort descending', async (t) => {
  const { app } = await harness(t);
  await createMiddleware(t, app, rateLimit);
  await createMiddleware(t, app, authelia);
  let r = await call(app, {
    method: 'POST',
    url: `/api/resources/${NEXTCLOUD}/middlewares`,
    payload: { middleware_id: 'rate-limit' },
  });
  t.is(r.status, 200);
  t.is(r.headers.etag, `"${r.body.etag}"`);
  t.deepEqual(r.body.middlewares, [{ id: 'rate-limit', priority: 100 }]);
  r = await call(app, {
    method: 'POST',
    url: `/api/resources/${NEXTCLOUD}/middlewares`,
    payload: { middleware_id: 'authelia', priority: 0 },
  });
  t.deepEqual(r.body.middlewares, [
    { id: 'authelia', priority: 100 },
    { id: 'rate-limit', priority: 100 },
  ]);
  r = await call(app, {
    method: 'POST',
    url: `/api/resources/${NEXTCLOUD}/middlewares`,
    payload: { middleware_id: 'rate-limit', priority: 300 },
    headers: { 'if-match': `"${r.body.etag}"` },
  });
  t.is(r.status, 200);
  t.deepEqual(r.body.middlewares, [
    { id: 'rate-limit', priority: 300 },
    { id: 'authelia', priority: 100 },
  ]);
  t.deepEqual(r.body.effective_middlewares, ['rate-limit', 'authelia', 'badger']);
  t.true(r.body.emitted);
  // the middleware shows who uses it
  t.deepEqual((await call(app, { url: '/api/middlewares/rate-limit' })).body.used_by, [`/api/resources/${NEXTCLOUD}`]);

  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: `/api/resources/${NEXTCLOUD}/middlewares`,
      payload: { middleware_id: 'ghost' },
    }),
    404,
    'not_found',
  );
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/resources/nope/middlewares',
      payload: { middleware_id: 'rate-limit' },
    }),
    404,
    'not_found',
  );
  for (const payload of [
    {},
    { middleware_id: 'rate-limit', priority: 10001 },
    { middleware_id: 'rate-limit', priority: -1 },
    { middleware_id: 'Rate Limit' },
    { middleware_id: 7 },
    [1],
  ]) {
    assertClientError(
      t,
      await call(app, { method: 'POST', url: `/api/resources/${NEXTCLOUD}/middlewares`, payload }),
      422,
      'validation_failed',
    );
  }
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: `/api/resources/${NEXTCLOUD}/middlewares`,
      payload: 'x',
      headers: { 'content-type': 'text/plain' },
    }),
    415,
  );
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: `/api/resources/${NEXTCLOUD}/middlewares`,
      payload: '{bad',
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'invalid_json',
  );
  assertClientError(
    t,
    await call(app, {
      method: 'POST',
      url: `/api/resources/${NEXTCLOUD}/middlewares`,
      payload: { middleware_id: 'authelia' },
      headers: { 'if-match': '"stale"' },
    }),
    412,
  );
});

test.serial(
  'assigning to a disabled resource answers 409 conflict (middleware, bulk, external, service, config)',
  async (t) => {
    const { app, dataDir } = await withDisabled(t);
    await createMiddleware(t, app, rateLimit);
    await createService(t, app, {
      id: 'app-v2',
      name: 'App v2',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://10.0.0.7:8080' }] },
    });
    const files = await resourceFiles(dataDir);
    const url = `/api/resources/${GRAFANA}`;
    for (const [method, suffix, payload] of [
      ['POST', '/middlewares', { middleware_id: 'rate-limit' }],
      ['POST', '/middlewares/bulk', { middlewares: [{ middleware_id: 'rate-limit' }] }],
      ['POST', '/external-middlewares', { name: 'crowdsec@file' }],
      ['POST', '/service', { service_id: 'app-v2' }],
      ['PUT', '/config/http', { entrypoints: ['websecure'] }],
      ['PUT', '/config/tls', { cert_resolver: 'letsencrypt' }],
      ['PUT', '/config/tcp', { enabled: false }],
      ['PUT', '/config/headers', { request: { 'X-A': 'b' } }],
      ['PUT', '/config/priority', { priority: 5 }],
      ['PUT', '/config/mtls', { enabled: false }],
      ['PUT', '/config/mtlswhitelist', { reject_code: 403 }],
    ] as const) {
      assertClientError(t, await call(app, { method, url: url + suffix, payload }), 409, 'conflict');
    }
    t.deepEqual(await resourceFiles(dataDir), files);
  },
);

test.serial(
  'bulk assignment is all or nothing: 422 lists every unknown id; replace swaps the whole list',
  async (t) => {
    const { app, dataDir } = await harness(t);
    await createMiddleware(t, app, rateLimit);
    await createMiddleware(t, app, authelia);
    const url = `/api/resources/${NEXTCLOUD}/middlewares/bulk`;
    let r = await call(app, {
      method: 'POST',
      url,
      payload: { middlewares: [{ middleware_id: 'rate-limit', priority: 50 }] },
    });
    t.deepEqual(r.body.middlewares, [{ id: 'rate-limit', priority: 50 }]);

    const files = await resourceFiles(dataDir);
    r = await call(app, {
      method: 'POST',
      url,
      payload: {
        middlewares: [{ middleware_id: 'ghost-one' }, { middleware_id: 'authelia' }, { middleware_id: 'ghost-two' }],
      },
    });
    assertClientError(t, r, 422, 'validation_failed');
    t.deepEqual(
      r.body.details.map((d: any) => d.path),
      ['/middlewares/0/middleware_id', '/middlewares/2/middleware_id'],
    );
    t.true(r.body.details[0].message.includes('ghost-one'));
    t.deepEqual(await resourceFiles(dataDir), files);

    r = await call(app, {
      method: 'POST',
      url,
      payload: { middlewares: [{ middleware_id: 'authelia', priority: 200 }] },
    });
    t.deepEqual(r.body.middlewares, [
      { id: 'authelia', priority: 200 },
      { id: 'rate-limit', priority: 50 },
    ]);
    r = await call(app, {
      method: 'POST',
      url,
      payload: { middlewares: [{ middleware_id: 'rate-limit' }], replace: true },
    });
    t.deepEqual(r.body.middlewares, [{ id: 'rate-limit', priority: 100 }]);

    const tooMany = Array.from({ length: 101 }, () => ({ middleware_id: 'rate-limit' }));
    for (const payload of [
      { middlewares: [] },
      { middlewares: tooMany },
      {},
      { middlewares: 'rate-limit' },
      { middlewares: [{ middleware_id: 'rate-limit' }], replace: 'yes' },
    ]) {
      assertClientError(t, await call(app, { method: 'POST', url, payload }), 422);
    }
  },
);

test.serial('DELETE /:id/middlewares/:middlewareId removes an assignment; 404 when not assigned', async (t) => {
  const { app } = await harness(t);
  await createMiddleware(t, app, rateLimit);
  await call(app, {
    method: 'POST',
    url: `/api/resources/${NEXTCLOUD}/middlewares`,
    payload: { middleware_id: 'rate-limit' },
  });
  t.is((await call(app, { method: 'DELETE', url: `/api/resources/${NEXTCLOUD}/middlewares/rate-limit` })).status, 204);
  t.deepEqual((await call(app, { url: `/api/resources/${NEXTCLOUD}` })).body.middlewares, []);
  assertClientError(
    t,
    await call(app, { method: 'DELETE', url: `/api/resources/${NEXTCLOUD}/middlewares/rate-limit` }),
    404,
    'not_found',
  );
  assertClientError(
    t,
    await call(app, { method: 'DELETE', url: `/api/resources/nope/middlewares/rate-limit` }),
    404,
    'not_found',
  );
});

test.serial(
  'external middlewares: upsert by name, listed by priority then name, deleted by URL-encoded name',
  async (t) => {
    const { app } = await harness(t);
    const url = `/api/resources/${NEXTCLOUD}/external-middlewares`;
    let r = await call(app, { method: 'POST', url, payload: { name: 'crowdsec@file', priority: 150 } });
    t.is(r.status, 200);
    t.deepEqual(r.body.external_middlewares, [{ name: 'crowdsec@file', priority: 150, provider: null }]);
    await call(app, { method: 'POST', url, payload: { name: 'geoblock', provider: 'file' } });
    r = await call(app, { method: 'POST', url, payload: { name: 'auth', priority: 100, provider: 'docker' } });
    t.deepEqual(r.body.effective_middlewares, ['crowdsec@file', 'auth@docker', 'geoblock@file', 'badger']);
    t.deepEqual((await call(app, { url })).body, [
      { name: 'crowdsec@file', priority: 150, provider: null },
      { name: 'auth', priority: 100, provider: 'docker' },
      { name: 'geoblock', priority: 100, provider: 'file' },
    ]);
    r = await call(app, { method: 'POST', url, payload: { name: 'crowdsec@file', priority: 10 } });
    t.deepEqual(
      r.body.external_middlewares.map((e: any) => [e.name, e.priority]),
      [
        ['auth', 100],
        ['geoblock', 100],
        ['crowdsec@file', 10],
      ],
    );

    t.is((await call(app, { method: 'DELETE', url: `${url}/crowdsec%40file` })).status, 204);
    t.is((await call(app, { method: 'DELETE', url: `${url}/geoblock` })).status, 204);
    assertClientError(t, await call(app, { method: 'DELETE', url: `${url}/geoblock` }), 404, 'not_found');
    assertClientError(t, await call(app, { method: 'DELETE', url: `${url}/bad%20name` }), 422);
    for (const payload of [
      {},
      { name: 'two@at@signs' },
      { name: 'x', priority: 20000 },
      { name: 'x', provider: 'bad provider' },
    ]) {
      assertClientError(t, await call(app, { method: 'POST', url, payload }), 422);
    }
    assertClientError(t, await call(app, { url: '/api/resources/nope/external-middlewares' }), 404);
  },
);

test.serial(
  'service assignment: GET/POST/DELETE with 404 for unknown or none, 422 for a non-http service',
  async (t) => {
    const { app } = await harness(t);
    await createService(t, app, {
      id: 'app-v2',
      name: 'App v2',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://10.0.0.7:8080' }] },
    });
    await createService(t, app, {
      id: 'ssh',
      name: 'SSH',
      type: 'loadBalancer',
      protocol: 'tcp',
      config: { servers: [{ address: '10.0.0.7:22' }] },
    });
    const url = `/api/resources/${NEXTCLOUD}/service`;
    assertClientError(t, await call(app, { url }), 404, 'not_found');
    assertClientError(t, await call(app, { method: 'DELETE', url }), 404, 'not_found');
    assertClientError(t, await call(app, { method: 'POST', url, payload: { service_id: 'ghost' } }), 404, 'not_found');
    assertClientError(
      t,
      await call(app, { method: 'POST', url, payload: { service_id: 'ssh' } }),
      422,
      'validation_failed',
    );
    assertClientError(t, await call(app, { method: 'POST', url, payload: {} }), 422);

    let r = await call(app, { method: 'POST', url, payload: { service_id: 'app-v2' } });
    t.is(r.status, 200);
    t.like(r.body, { service_id: 'app-v2', effective_service: 'app-v2', emitted: true });
    const got = await call(app, { url });
    t.like(got.body, {
      resource_id: NEXTCLOUD,
      service_id: 'app-v2',
      service: { id: 'app-v2', protocol: 'http', source: 'manual' },
    });
    t.deepEqual(got.body.service.used_by, [`/api/resources/${NEXTCLOUD}`]);

    // a discovered service: referenced by its upstream key in Pangolin mode
    r = await call(app, { method: 'POST', url, payload: { service_id: '2-grafana-service' } });
    t.like(r.body, { service_id: '2-grafana-service', effective_service: '2-Grafana-service' });
    t.is((await call(app, { method: 'DELETE', url })).status, 204);
    t.like((await call(app, { url: `/api/resources/${NEXTCLOUD}` })).body, {
      service_id: null,
      effective_service: '1-Nextcloud-service',
      emitted: false,
    });
  },
);

test.serial(
  'effective_* follow G6/G7: headers, ours and external by priority, then upstream; service and priority overrides',
  async (t) => {
    const { app } = await harness(t);
    await createMiddleware(t, app, rateLimit);
    await createMiddleware(t, app, authelia);
    await createService(t, app, {
      id: 'app-v2',
      name: 'App v2',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://10.0.0.7:8080' }] },
    });
    const base = `/api/resources/${NEXTCLOUD}`;
    await call(app, {
      method: 'POST',
      url: `${base}/middlewares/bulk`,
      payload: {
        middlewares: [
          { middleware_id: 'authelia', priority: 200 },
          { middleware_id: 'rate-limit', priority: 100 },
        ],
      },
    });
    await call(app, {
      method: 'POST',
      url: `${base}/external-middlewares`,
      payload: { name: 'crowdsec@file', priority: 150 },
    });
    await call(app, { method: 'POST', url: `${base}/service`, payload: { service_id: 'app-v2' } });
    await call(app, {
      method: 'PUT',
      url: `${base}/config/headers`,
      payload: { request: { 'X-Forwarded-Proto': 'https' } },
    });
    const r = await call(app, { method: 'PUT', url: `${base}/config/priority`, payload: { priority: 500 } });
    t.deepEqual(r.body.effective_middlewares, [
      `${NEXTCLOUD}_headers`,
      'authelia',
      'crowdsec@file',
      'rate-limit',
      'badger',
    ]);
    t.like(r.body, { effective_service: 'app-v2', emitted: true, warnings: [] });

    // a middleware deleted by hand is skipped and reported
    await unlink(path.join(app.store.dataDir, 'middlewares', 'authelia.yaml'));
    const view = await waitFor(async () => {
      const v = (await call(app, { url: base })).body;
      return v.effective_middlewares.includes('authelia') ? null : v;
    }, 2000);
    t.deepEqual(view.effective_middlewares, [`${NEXTCLOUD}_headers`, 'crowdsec@file', 'rate-limit', 'badger']);
    t.true(view.warnings.some((w: string) => w.includes('/api/middlewares/authelia')));
  },
);
