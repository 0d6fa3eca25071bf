import test from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../helpers/build.ts';
import { assertClientError, call, mtlsApp } from './support.ts';

const DEFAULTS = {
  rules: [],
  request_headers: {},
  reject_message: 'Access denied: a valid client certificate is required',
  reject_code: 403,
  refresh_interval: '300s',
  external_data: null,
};

test('GET /api/mtls/middleware/config answers the defaults; PUT replaces everything, absent fields back to defaults', async (t) => {
  const { app } = await mtlsApp(t);
  const initial = await call(app, { url: '/api/mtls/middleware/config' });
  t.deepEqual(initial.body, DEFAULTS);
  const full = {
    rules: [
      { type: 'ipRange', ranges: ['192.0.2.0/24'] },
      { type: 'anyOf', rules: [{ type: 'header', headers: { 'X-A': 'b' } }] },
    ],
    request_headers: { 'X-Client-CN': '{{.Cert.Subject.CommonName}}' },
    reject_message: 'Go away',
    reject_code: 401,
    refresh_interval: '1m30s',
    external_data: { url: 'https://example.com/allow.json' },
  };
  const put = await call(app, { method: 'PUT', url: '/api/mtls/middleware/config', payload: full });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.deepEqual(put.body, full);
  t.deepEqual((await call(app, { url: '/api/mtls/middleware/config' })).body, full);
  const etag = (await call(app, { url: '/api/mtls/config' })).body.etag;
  t.is(put.headers.etag, `"${etag}"`);

  // full replace: what is not sent goes back to its default
  const partial = await call(app, { method: 'PUT', url: '/api/mtls/middleware/config', payload: { reject_code: 451 } });
  t.deepEqual(partial.body, { ...DEFAULTS, reject_code: 451 });
  // If-Match against the mTLS config ETag
  assertClientError(
    t,
    await call(app, {
      method: 'PUT',
      url: '/api/mtls/middleware/config',
      payload: {},
      headers: { 'if-match': `"${etag}"` },
    }),
    412,
  );
});

test('PUT /api/mtls/middleware/config accepts JSON text for rules and request_headers, mtls_* names and integer seconds', async (t) => {
  const { app } = await mtlsApp(t);
  const r = await call(app, {
    method: 'PUT',
    url: '/api/mtls/middleware/config',
    payload: {
      rules: '[{"type":"header","headers":{"X-A":"b"}}]',
      request_headers: '{"X-Cert":"{{.Cert.Subject.CommonName}}"}',
      refresh_interval: 60,
      mtls_reject_message: 'old client',
      external_data: '{"k":1}',
    },
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(r.body, {
    rules: [{ type: 'header', headers: { 'X-A': 'b' } }],
    request_headers: { 'X-Cert': '{{.Cert.Subject.CommonName}}' },
    reject_message: 'old client',
    reject_code: 403,
    refresh_interval: '60s',
    external_data: { k: 1 },
  });
  t.is(
    (await call(app, { method: 'PUT', url: '/api/mtls/middleware/config', payload: { mtls_refresh_interval: '120' } }))
      .body.refresh_interval,
    '120s',
  );
  t.is(
    (await call(app, { method: 'PUT', url: '/api/mtls/middleware/config', payload: { refresh_interval: null } })).body
      .refresh_interval,
    '300s',
  );
});

test('GET /api/mtls/plugin/check: path unset, file missing, plugin found by module name and by key', async (t) => {
  const dir = await tempDir(t);
  const staticPath = path.join(dir, 'traefik.yml');
  const { app } = await mtlsApp(t, { proxy: { static_config_path: staticPath } });
  const check = async () => (await call(app, { url: '/api/mtls/plugin/check' })).body;
  const absent = { installed: false, plugin_name: 'mtlswhitelist', key: null, module_name: null, version: null };

  t.deepEqual(await check(), { ...absent, static_config_path: staticPath }, 'file missing');

  await writeFile(
    staticPath,
    'experimental:\n  plugins:\n    certs:\n      moduleName: github.com/SmerschJohann/mtlswhitelist\n      version: v0.3.4\n',
  );
  t.deepEqual(await check(), {
    installed: true,
    plugin_name: 'mtlswhitelist',
    key: 'certs',
    module_name: 'github.com/SmerschJohann/mtlswhitelist',
    version: 'v0.3.4',
    static_config_path: staticPath,
  });

  await writeFile(
    staticPath,
    '# by key\nexperimental:\n  plugins:\n    MTLSWhitelist:\n      moduleName: example.com/fork/whitelist\n      version: v1.0.0\n    bouncer:\n      moduleName: github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin\n      version: v1.4.2\n',
  );
  t.like(await check(), {
    installed: true,
    key: 'MTLSWhitelist',
    module_name: 'example.com/fork/whitelist',
    version: 'v1.0.0',
  });

  await writeFile(
    staticPath,
    'experimental:\n  localPlugins:\n    mtlswhitelist:\n      moduleName: github.com/smerschjohann/mtlswhitelist\n',
  );
  t.like(await check(), { installed: false }, 'only experimental.plugins counts');

  await writeFile(staticPath, 'experimental: [unbalanced');
  t.deepEqual(await check(), { ...absent, static_config_path: staticPath }, 'invalid YAML');

  // settings.yaml wins over the config; unset everywhere → installed false, path null
  await app.settings.update((s) => ({ ...s, proxy_static_config_path: path.join(dir, 'other.yml') }));
  t.is((await check()).static_config_path, path.join(dir, 'other.yml'));
  const { app: bare } = await mtlsApp(t);
  t.deepEqual((await call(bare, { url: '/api/mtls/plugin/check' })).body, { ...absent, static_config_path: null });
});

test('the OpenAPI document describes the mTLS routes', async (t) => {
  const { app } = await mtlsApp(t);
  const doc = await call(app, { url: '/api/openapi.json' });
  t.is(doc.status, 200);
  for (const route of [
    '/api/mtls/config',
    '/api/mtls/ca',
    '/api/mtls/clients',
    '/api/mtls/clients/{id}',
    '/api/mtls/clients/{id}/download',
    '/api/mtls/crl',
    '/api/mtls/verify',
  ]) {
    t.truthy(doc.body.paths[route], route);
  }
  t.truthy(doc.body.paths['/api/mtls/clients'].post.responses['201']);
  t.truthy(doc.body.paths['/api/mtls/verify'].post, 'verify takes any method');
  t.false(JSON.stringify(doc.body.paths['/api/mtls/clients']).includes('"key"'), 'no key field in client schemas');
});
