import test from 'ava';
import {
  assertClientError,
  call,
  createService,
  harness,
  NEXTCLOUD,
  resourceFiles,
  startTraefikWithRouters,
} from './support.ts';

const url = (kind: string) => `/api/resources/${NEXTCLOUD}/config/${kind}`;

test.serial('PUT /config/<kind> replaces each sub-object; null and absent fields take their defaults', async (t) => {
  const { app } = await harness(t);
  await createService(t, app, {
    id: 'ssh',
    name: 'SSH',
    type: 'loadBalancer',
    protocol: 'tcp',
    config: { servers: [{ address: '10.0.0.7:22' }] },
  });
  const cases: Array<[string, object, object]> = [
    ['http', { entrypoints: ['websecure', 'web'] }, { entrypoints: ['websecure', 'web'] }],
    ['http', { entrypoints: null }, { entrypoints: [] }],
    [
      'tls',
      { cert_resolver: 'le', domains: [{ main: '*.example.com', sans: ['example.com'] }], options: 'modern' },
      { cert_resolver: 'le', domains: [{ main: '*.example.com', sans: ['example.com'] }], options: 'modern' },
    ],
    [
      'tls',
      { domains: [{ main: 'a.example.com' }] },
      { cert_resolver: null, domains: [{ main: 'a.example.com', sans: [] }], options: null },
    ],
    [
      'tcp',
      { enabled: true, entrypoints: ['tcp-2222'], service_id: 'ssh' },
      { enabled: true, entrypoints: ['tcp-2222'], sni_rule: null, service_id: 'ssh' },
    ],
    ['tcp', {}, { enabled: false, entrypoints: ['tcp'], sni_rule: null, service_id: null }],
    [
      'headers',
      { request: { 'X-Forwarded-Proto': 'https', 'X-Remove': '' } },
      { request: { 'X-Forwarded-Proto': 'https', 'X-Remove': '' }, response: {} },
    ],
    ['priority', { priority: Number.MAX_SAFE_INTEGER }, { priority: Number.MAX_SAFE_INTEGER }],
    ['priority', { priority: null }, { priority: null }],
    ['mtls', { enabled: false }, { enabled: false }],
    [
      'mtlswhitelist',
      { rules: [{ type: 'ipRange', ranges: ['192.0.2.0/24'] }], reject_code: 401, refresh_interval: 60 },
      {
        rules: [{ type: 'ipRange', ranges: ['192.0.2.0/24'] }],
        request_headers: null,
        reject_message: null,
        reject_code: 401,
        refresh_interval: 60,
        external_data: null,
      },
    ],
    [
      'mtlswhitelist',
      { refresh_interval: '1m30s', request_headers: { 'X-Cert': '{{.Cert.Subject.CommonName}}' } },
      {
        rules: null,
        request_headers: { 'X-Cert': '{{.Cert.Subject.CommonName}}' },
        reject_message: null,
        reject_code: null,
        refresh_interval: '1m30s',
        external_data: null,
      },
    ],
  ];
  for (const [kind, payload, expected] of cases) {
    const r = await call(app, { method: 'PUT', url: url(kind), payload });
    t.is(r.status, 200, `${kind} ${JSON.stringify(r.body)}`);
    t.deepEqual(r.body.config[kind], expected, kind);
    t.is(r.headers.etag, `"${r.body.etag}"`);
  }
  // no body at all: every field optional, so the defaults
  const empty = await call(app, { method: 'PUT', url: url('headers') });
  t.deepEqual(empty.body.config.headers, { request: {}, response: {} });
  // unknown fields are dropped
  t.is(
    (await call(app, { method: 'PUT', url: url('priority'), payload: { priority: 7, colour: 'red' } })).body.config
      .priority.priority,
    7,
  );
  // If-Match
  const etag = (await call(app, { url: `/api/resources/${NEXTCLOUD}` })).body.etag;
  assertClientError(
    t,
    await call(app, {
      method: 'PUT',
      url: url('priority'),
      payload: { priority: 8 },
      headers: { 'if-match': '"abc"' },
    }),
    412,
  );
  t.is(
    (
      await call(app, {
        method: 'PUT',
        url: url('priority'),
        payload: { priority: 8 },
        headers: { 'if-match': `W/"${etag}"` },
      })
    ).status,
    200,
  );
});

test.serial(
  'config bodies are validated: 422 with details, 404 for an unknown TCP service, nothing written',
  async (t) => {
    const { app, dataDir } = await harness(t);
    await createService(t, app, {
      id: 'web',
      name: 'Web',
      type: 'loadBalancer',
      config: { servers: [{ url: 'http://10.0.0.7:80' }] },
    });
    const files = await resourceFiles(dataDir);
    const bad: Array<[string, unknown, number]> = [
      ['http', { entrypoints: ['web secure'] }, 422],
      ['http', { entrypoints: Array.from({ length: 21 }, (_, i) => `ep${i}`) }, 422],
      ['http', { entrypoints: 'web secure, web' }, 422],
      ['http', { entrypoints: 5 }, 422],
      ['tls', { domains: [{ main: 'bad_host.example.com' }] }, 422],
      ['tls', { domains: [{ sans: ['a.example.com'] }] }, 422],
      ['tls', { cert_resolver: 5 }, 422],
      ['tcp', { service_id: 'ghost' }, 404],
      ['tcp', { service_id: 'web' }, 422],
      ['tcp', { sni_rule: 'x'.repeat(1025) }, 422],
      ['tcp', { enabled: 'yes' }, 422],
      ['headers', { request: { 'Bad Header': 'x' } }, 422],
      ['headers', { response: { 'X-A': 'x'.repeat(8193) } }, 422],
      ['headers', { request: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`X-${i}`, 'v'])) }, 422],
      ['headers', { request: { 'X-A': 5 } }, 422],
      ['priority', { priority: 0 }, 422],
      ['priority', { priority: 1.5 }, 422],
      ['priority', { priority: 9007199254740992 }, 422],
      ['mtls', { enabled: 'maybe' }, 422],
      ['mtlswhitelist', { reject_code: 399 }, 422],
      ['mtlswhitelist', { refresh_interval: '5x' }, 422],
      ['mtlswhitelist', { rules: [{ type: 'everything' }] }, 422],
      ['mtlswhitelist', { rules: 'nope' }, 422],
      ['mtlswhitelist', { reject_message: 'x'.repeat(1001) }, 422],
      ['mtlswhitelist', { request_headers: { 'bad name': 'x' } }, 422],
      ['priority', [1, 2], 422],
    ];
    for (const [kind, payload, status] of bad) {
      const r = await call(app, { method: 'PUT', url: url(kind), payload: payload as object });
      assertClientError(t, r, status);
      if (status === 422) t.true(Array.isArray(r.body.details) && r.body.details.length > 0, JSON.stringify(r.body));
    }
    t.deepEqual(await resourceFiles(dataDir), files);
  },
);

test.serial(
  'PUT /config/mtls: enabling answers 409 conflict while no CA exists (no mTLS group yet); disabling is fine',
  async (t) => {
    const { app } = await harness(t);
    const r = await call(app, { method: 'PUT', url: url('mtls'), payload: { enabled: true } });
    assertClientError(t, r, 409, 'conflict');
    t.regex(r.body.message, /no CA/);
    t.is((await call(app, { method: 'PUT', url: url('mtls'), payload: { enabled: false } })).status, 200);
  },
);

test.serial('PUT /config/tcp: 422 when enabling without sni_rule on a resource without a host', async (t) => {
  const traefik = await startTraefikWithRouters(
    t,
    JSON.stringify([
      {
        name: 'paths@docker',
        provider: 'docker',
        status: 'enabled',
        rule: 'PathPrefix(`/x`)',
        service: 'x',
        priority: 15,
        priorityStr: '15',
      },
    ]),
  );
  const { app } = await harness(t, { active: 'traefik', traefikUrl: traefik.url });
  const r = await call(app, { method: 'PUT', url: '/api/resources/paths/config/tcp', payload: { enabled: true } });
  assertClientError(t, r, 422, 'validation_failed');
  t.is(r.body.details[0].path, '/sni_rule');
  const ok = await call(app, {
    method: 'PUT',
    url: '/api/resources/paths/config/tcp',
    payload: { enabled: true, sni_rule: 'HostSNI(`*`)' },
  });
  t.is(ok.status, 200);
});

test.serial('middleware-manager aliases: comma strings, old field names and JSON-text values', async (t) => {
  const { app } = await harness(t);
  const put = async (kind: string, payload: object) => {
    const r = await call(app, { method: 'PUT', url: url(kind), payload });
    t.is(r.status, 200, `${kind} ${JSON.stringify(payload)} → ${JSON.stringify(r.body)}`);
    return r.body.config[kind];
  };
  t.deepEqual(await put('http', { entrypoints: 'websecure, web' }), { entrypoints: ['websecure', 'web'] });
  t.deepEqual(await put('http', { entrypoints: '' }), { entrypoints: [] });
  t.deepEqual((await put('tls', { tls_domains: 'a.example.com, *.b.example.com' })).domains, [
    { main: 'a.example.com', sans: [] },
    { main: '*.b.example.com', sans: [] },
  ]);
  t.deepEqual((await put('tls', { tls_domains: '' })).domains, null);
  t.deepEqual(
    await put('tcp', {
      tcp_enabled: 'true',
      tcp_entrypoints: 'tcp-2222,tcp-3333',
      tcp_sni_rule: 'HostSNI(`cloud.example.com`)',
    }),
    {
      enabled: true,
      entrypoints: ['tcp-2222', 'tcp-3333'],
      sni_rule: 'HostSNI(`cloud.example.com`)',
      service_id: null,
    },
  );
  t.deepEqual(await put('tcp', { tcp_enabled: false, tcp_sni_rule: '' }), {
    enabled: false,
    entrypoints: ['tcp'],
    sni_rule: null,
    service_id: null,
  });
  t.deepEqual(await put('headers', { custom_headers: { 'X-Env': 'prod' } }), {
    request: { 'X-Env': 'prod' },
    response: {},
  });
  t.deepEqual(await put('headers', { custom_headers: '{"X-Env":"test"}' }), {
    request: { 'X-Env': 'test' },
    response: {},
  });
  t.deepEqual(await put('priority', { router_priority: 300 }), { priority: 300 });
  t.deepEqual(await put('priority', { router_priority: '301' }), { priority: 301 });
  t.deepEqual(await put('mtls', { mtls_enabled: 'false' }), { enabled: false });
  assertClientError(t, await call(app, { method: 'PUT', url: url('mtls'), payload: { mtls_enabled: true } }), 409);
  t.deepEqual(
    await put('mtlswhitelist', {
      mtls_rules: '[{"type":"header","headers":{"X-A":"b"}}]',
      mtls_request_headers: '{"X-Cert":"{{.Cert.Subject.CommonName}}"}',
      mtls_reject_message: 'go away',
      mtls_reject_code: '401',
      mtls_refresh_interval: '300',
      mtls_external_data: '{"url":"http://example.com/list"}',
    }),
    {
      rules: [{ type: 'header', headers: { 'X-A': 'b' } }],
      request_headers: { 'X-Cert': '{{.Cert.Subject.CommonName}}' },
      reject_message: 'go away',
      reject_code: 401,
      refresh_interval: 300,
      external_data: { url: 'http://example.com/list' },
    },
  );
  t.is((await put('mtlswhitelist', { mtls_refresh_interval: '5m' })).refresh_interval, '5m');
  t.is((await put('mtlswhitelist', { rules: '[]' })).rules.length, 0);
  // bad JSON text stays text and fails validation
  assertClientError(
    t,
    await call(app, { method: 'PUT', url: url('mtlswhitelist'), payload: { mtls_rules: '[{' } }),
    422,
  );
  // the canonical field wins over its alias
  t.deepEqual(await put('priority', { priority: 42, router_priority: 43 }), { priority: 42 });

  const ext = await call(app, {
    method: 'POST',
    url: `/api/resources/${NEXTCLOUD}/external-middlewares`,
    payload: { middleware_name: 'crowdsec@file', priority: 120 },
  });
  t.is(ext.status, 200);
  t.deepEqual(ext.body.external_middlewares, [{ name: 'crowdsec@file', priority: 120, provider: null }]);
});
