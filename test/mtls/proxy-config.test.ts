import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { harness, NEXTCLOUD } from '../resources/support.ts';
import { schemaWarnings } from '../proxy-config/inputs.ts';
import { assertClientError, call } from './support.ts';

const ROUTER = '1-Nextcloud-router';
const mtlsUrl = `/api/resources/${NEXTCLOUD}/config/mtls`;

/** The served config once `ready` holds for it (generation follows store changes asynchronously). */
async function servedConfig(app: FastifyInstance, ready: (config: any) => boolean): Promise<any> {
  return waitFor(async () => {
    const config = JSON.parse((await app.inject({ url: '/api/v1/proxy-config' })).body);
    return ready(config) ? config : undefined;
  }, 5000);
}

test('mTLS on a resource: 409 until a CA exists and mTLS is enabled; then the generated config routes it through sm_mtls_*', async (t) => {
  const { app, dataDir } = await harness(t, {
    config: { mtls: { verify_url: 'http://sm.internal:3456/api/mtls/verify' } },
  });
  assertClientError(t, await call(app, { method: 'PUT', url: mtlsUrl, payload: { enabled: true } }), 409, 'conflict');
  t.is(
    (await call(app, { method: 'POST', url: '/api/mtls/ca', payload: { common_name: 'Edge CA', key_size: 2048 } }))
      .status,
    201,
  );
  const disabled = await call(app, { method: 'PUT', url: mtlsUrl, payload: { enabled: true } });
  assertClientError(t, disabled, 409, 'conflict');
  t.regex(disabled.body.message, /globally disabled/);
  t.is((await call(app, { method: 'PUT', url: '/api/mtls/enable' })).status, 200);
  const enabled = await call(app, { method: 'PUT', url: mtlsUrl, payload: { mtls_enabled: 'true' } });
  t.is(enabled.status, 200, JSON.stringify(enabled.body));
  t.deepEqual(enabled.body.config.mtls, { enabled: true });
  t.deepEqual(enabled.body.effective_middlewares, ['sm_mtls_passcert', 'sm_mtls_verify', 'badger']);

  const caPem = await readFile(path.join(dataDir, 'mtls', 'ca.crt'), 'utf8');
  const config = await servedConfig(app, (c) => c.tls?.options?.sm_mtls !== undefined);
  t.deepEqual(config.http.middlewares.sm_mtls_passcert, { passTLSClientCert: { pem: true } });
  t.deepEqual(config.http.middlewares.sm_mtls_verify, {
    forwardAuth: { address: 'http://sm.internal:3456/api/mtls/verify' },
  });
  t.deepEqual(config.tls.options.sm_mtls, {
    clientAuth: { caFiles: [caPem], clientAuthType: 'RequireAndVerifyClientCert' },
    minVersion: 'VersionTLS12',
    sniStrict: true,
  });
  const router = config.http.routers[ROUTER];
  t.deepEqual(router.middlewares, ['sm_mtls_passcert', 'sm_mtls_verify', 'badger']);
  t.deepEqual(router.tls, { certResolver: 'letsencrypt', options: 'sm_mtls' });
  t.false(
    Object.keys(config.http.middlewares).some((k) => k.endsWith('_mtls')),
    'no plugin middleware without the plugin',
  );
  t.deepEqual(schemaWarnings(config), []);
  const status = await call(app, { url: '/api/proxy-config/status' });
  t.deepEqual(status.body.schema_warnings, []);

  // globally disabled: the resource keeps its flag, nothing is emitted
  t.is((await call(app, { method: 'PUT', url: '/api/mtls/disable' })).status, 200);
  const off = await servedConfig(app, (c) => c.tls?.options?.sm_mtls === undefined);
  t.deepEqual(off.http.routers[ROUTER].middlewares, ['badger']);
  t.is(off.http.middlewares.sm_mtls_verify, undefined);
  const resource = await call(app, { url: `/api/resources/${NEXTCLOUD}` });
  t.deepEqual(resource.body.config.mtls, { enabled: true });
  t.true(
    resource.body.warnings.some((w: string) => /mTLS/.test(w)),
    JSON.stringify(resource.body.warnings),
  );
});

test('with the mtlswhitelist plugin installed: <id>_mtls from the global settings, certificates optional at TLS level', async (t) => {
  const dir = await tempDir(t);
  const staticPath = path.join(dir, 'traefik.yml');
  await writeFile(
    staticPath,
    'experimental:\n  plugins:\n    mtlsw:\n      moduleName: github.com/smerschjohann/mtlswhitelist\n      version: v0.3.4\n',
  );
  const { app } = await harness(t, {
    config: { proxy: { static_config_path: staticPath }, mtls: { proxy_ca_path: '/etc/traefik/mtls/ca.crt' } },
  });
  t.is(
    (await call(app, { method: 'POST', url: '/api/mtls/ca', payload: { common_name: 'Edge CA', key_size: 2048 } }))
      .status,
    201,
  );
  t.is((await call(app, { method: 'PUT', url: '/api/mtls/enable' })).status, 200);
  t.is((await call(app, { method: 'PUT', url: mtlsUrl, payload: { enabled: true } })).status, 200);
  t.is(
    (
      await call(app, {
        method: 'PUT',
        url: `/api/resources/${NEXTCLOUD}/config/mtlswhitelist`,
        payload: { reject_code: 401 },
      })
    ).status,
    200,
  );
  t.is(
    (
      await call(app, {
        method: 'PUT',
        url: '/api/mtls/middleware/config',
        payload: {
          rules: [{ type: 'ipRange', ranges: ['10.0.0.0/8'] }],
          reject_message: 'No certificate, no entry',
          refresh_interval: 30,
          request_headers: { 'X-CN': '{{.Cert.Subject.CommonName}}' },
        },
      })
    ).status,
    200,
  );

  const config = await servedConfig(
    app,
    (c) => c.http?.middlewares?.[`${NEXTCLOUD}_mtls`]?.plugin?.mtlsw?.refreshInterval === '30s',
  );
  t.deepEqual(config.http.middlewares[`${NEXTCLOUD}_mtls`], {
    plugin: {
      mtlsw: {
        rules: [{ type: 'ipRange', ranges: ['10.0.0.0/8'] }],
        requestHeaders: { 'X-CN': '{{.Cert.Subject.CommonName}}' },
        rejectMessage: { message: 'No certificate, no entry', code: 401 },
        refreshInterval: '30s',
      },
    },
  });
  t.deepEqual(config.tls.options.sm_mtls.clientAuth, {
    caFiles: ['/etc/traefik/mtls/ca.crt'],
    clientAuthType: 'VerifyClientCertIfGiven',
  });
  t.deepEqual(config.http.routers[ROUTER].middlewares, [
    'sm_mtls_passcert',
    'sm_mtls_verify',
    `${NEXTCLOUD}_mtls`,
    'badger',
  ]);
  t.deepEqual(schemaWarnings(config), []);
});

test('deleting the CA turns mTLS off in the generated config at once', async (t) => {
  const { app } = await harness(t);
  await call(app, { method: 'POST', url: '/api/mtls/ca', payload: { common_name: 'Edge CA', key_size: 2048 } });
  await call(app, { method: 'PUT', url: '/api/mtls/enable' });
  t.is((await call(app, { method: 'PUT', url: mtlsUrl, payload: { enabled: true } })).status, 200);
  await servedConfig(app, (c) => c.tls?.options?.sm_mtls !== undefined);
  t.is((await call(app, { method: 'DELETE', url: '/api/mtls/ca' })).status, 204);
  const config = await servedConfig(app, (c) => c.tls?.options?.sm_mtls === undefined);
  t.deepEqual(config.http.routers[ROUTER].middlewares, ['badger']);
  t.is((await call(app, { url: '/api/mtls/config' })).body.enabled, false);
});
