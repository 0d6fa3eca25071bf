import test from 'ava';
import type { Resource, Service } from '../../model/types.ts';
import {
  appV2,
  entry,
  fixtureResource,
  generatePangolin,
  mtlsState,
  resource,
  router,
  schemaWarnings,
  type Config,
  type ConfigPatch,
} from './inputs.ts';

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQk\n-----END CERTIFICATE-----\n';

const GRAFANA = {
  id: '2-grafana-router',
  name: '2-Grafana-router',
  host: 'grafana.example.com',
  service: '2-Grafana-service',
};

/** Resource `2-Grafana-router` of the fixture stack with extra fields and config patches. */
const grafana = (fields: Partial<Resource> = {}, config: ConfigPatch = {}): Resource =>
  fixtureResource(GRAFANA, fields, config);

test('mTLS with the plugin: chain, plugin middleware, sm_mtls TLS options that let the plugin answer', (t) => {
  const mtls = mtlsState({ enabled: true, ca_pem: CA_PEM, plugin: { installed: true, key: 'mtlswhitelist' } });
  mtls.middleware.rules = [{ type: 'ipRange', ranges: ['192.0.2.0/24'] }];
  const res = grafana(
    { middlewares: [] },
    {
      mtls: { enabled: true },
      headers: { request: { 'X-Client': 'mtls' }, response: {} },
      mtlswhitelist: {
        reject_code: 401,
        refresh_interval: 60,
        request_headers: { 'X-Cert-CN': '[[.Cert.Subject.CommonName]]' },
        external_data: { url: 'http://lists/allowed.json' },
      },
    },
  );
  const { config, result } = generatePangolin([res], { mtls });
  const r = router(config, '2-Grafana-router');
  t.deepEqual(r.middlewares, [
    'sm_mtls_passcert',
    'sm_mtls_verify',
    '2-grafana-router_mtls',
    '2-grafana-router_headers',
    'badger',
  ]);
  t.deepEqual(r.tls, { certResolver: 'letsencrypt', options: 'sm_mtls' });
  t.deepEqual(entry(config, 'http', 'middlewares', 'sm_mtls_passcert'), { passTLSClientCert: { pem: true } });
  t.deepEqual(entry(config, 'http', 'middlewares', 'sm_mtls_verify'), {
    forwardAuth: { address: 'http://stack-manager:3000/api/mtls/verify' },
  });
  t.deepEqual(config.tls.options.sm_mtls, {
    clientAuth: { caFiles: [CA_PEM], clientAuthType: 'VerifyClientCertIfGiven' },
    minVersion: 'VersionTLS12',
    sniStrict: true,
  });
  // global settings (rules, message) with the resource's non-null fields on top
  t.deepEqual(entry(config, 'http', 'middlewares', '2-grafana-router_mtls'), {
    plugin: {
      mtlswhitelist: {
        rules: [{ type: 'ipRange', ranges: ['192.0.2.0/24'] }],
        externalData: { url: 'http://lists/allowed.json' },
        requestHeaders: { 'X-Cert-CN': '[[.Cert.Subject.CommonName]]' },
        rejectMessage: { message: 'Access denied: a valid client certificate is required', code: 401 },
        refreshInterval: '60s',
      },
    },
  });
  t.deepEqual(result.resources['2-grafana-router'].warnings, []);
  t.deepEqual(schemaWarnings(config), []);
});

test('mTLS plugin middleware omits empty requestHeaders and null externalData; the key follows the static config', (t) => {
  const mtls = mtlsState({ enabled: true, ca_pem: CA_PEM, plugin: { installed: true, key: 'mtls' } });
  const { config } = generatePangolin([grafana({}, { mtls: { enabled: true }, mtlswhitelist: { rules: [] } })], {
    mtls,
  });
  t.deepEqual(entry(config, 'http', 'middlewares', '2-grafana-router_mtls'), {
    plugin: {
      mtls: {
        rules: [],
        rejectMessage: { message: 'Access denied: a valid client certificate is required', code: 403 },
        refreshInterval: '300s',
      },
    },
  });
});

test('mTLS without the plugin: no plugin middleware, certificates required by TLS, CA path preferred', (t) => {
  const mtls = mtlsState({
    enabled: true,
    ca_pem: CA_PEM,
    proxy_ca_path: '/etc/traefik/mtls/ca.crt',
    plugin: { installed: false, key: 'mtlswhitelist' },
  });
  const res = grafana({}, { mtls: { enabled: true }, tls: { options: 'modern' } });
  const { config, result } = generatePangolin([res], { mtls });
  const r = router(config, '2-Grafana-router');
  t.deepEqual(r.middlewares, ['sm_mtls_passcert', 'sm_mtls_verify', 'badger']);
  t.is((r.tls as Config).options, 'sm_mtls', 'mTLS wins over config.tls.options');
  t.regex(result.resources['2-grafana-router'].warnings[0], /"modern" is replaced by sm_mtls/);
  t.is(entry(config, 'http', 'middlewares', '2-grafana-router_mtls'), undefined);
  t.deepEqual(config.tls.options.sm_mtls.clientAuth, {
    caFiles: ['/etc/traefik/mtls/ca.crt'],
    clientAuthType: 'RequireAndVerifyClientCert',
  });
  t.deepEqual(schemaWarnings(config), []);
});

test('mTLS globally disabled: resource flag kept but nothing emitted for it', (t) => {
  const res = grafana({}, { mtls: { enabled: true } });
  const { config, result } = generatePangolin([res], { mtls: mtlsState({ enabled: false, ca_pem: CA_PEM }) });
  t.deepEqual(router(config, '2-Grafana-router').middlewares, ['badger']);
  t.deepEqual(router(config, '2-Grafana-router').tls, { certResolver: 'letsencrypt' });
  t.is(entry(config, 'http', 'middlewares', 'sm_mtls_passcert'), undefined);
  t.is(config.tls, undefined);
  t.regex(result.resources['2-grafana-router'].warnings[0], /not globally/);
});

test('TCP with derived servers: <id>_tcp router and service from the HTTP load balancer', (t) => {
  const res = grafana({}, { tcp: { enabled: true, entrypoints: ['tcp-443'] } });
  const { config, result } = generatePangolin([res]);
  t.deepEqual(entry(config, 'tcp', 'routers', '2-grafana-router_tcp'), {
    entryPoints: ['tcp-443'],
    rule: 'HostSNI(`grafana.example.com`)',
    service: '2-grafana-router_tcp',
    tls: { certResolver: 'letsencrypt' },
  });
  t.deepEqual(entry(config, 'tcp', 'services', '2-grafana-router_tcp'), {
    loadBalancer: { servers: [{ address: '100.89.128.8:46211' }, { address: '100.89.128.12:58904' }] },
  });
  t.truthy(entry(config, 'tcp', 'routers', '4-SSH-router'), 'upstream TCP routers stay');
  t.deepEqual(result.resources['2-grafana-router'].warnings, []);
  t.deepEqual(schemaWarnings(config), []);
});

test('TCP ports default to 80/443 by scheme and an assigned HTTP service is the source', (t) => {
  const bare: Service = {
    ...appV2,
    id: 'bare',
    config: { servers: [{ url: 'https://10.0.0.9' }, { url: 'http://[2001:db8::7]' }] },
  };
  const res = grafana({ service_id: 'bare' }, { tcp: { enabled: true, sni_rule: 'HostSNI(`*.example.com`)' } });
  const { config } = generatePangolin([res], { services: [bare] });
  t.deepEqual(entry(config, 'tcp', 'services', '2-grafana-router_tcp'), {
    loadBalancer: { servers: [{ address: '10.0.0.9:443' }, { address: '[2001:db8::7]:80' }] },
  });
  t.is((entry(config, 'tcp', 'routers', '2-grafana-router_tcp') as Config).rule, 'HostSNI(`*.example.com`)');
  t.deepEqual(schemaWarnings(config), []);
});

test('TCP with service_id uses that service and derives nothing', (t) => {
  const sshPool: Service = {
    id: 'ssh-pool',
    name: 'SSH pool',
    type: 'loadBalancer',
    protocol: 'tcp',
    config: { servers: [{ address: '10.0.0.2:22' }] },
  };
  const wiki = resource(
    '3-wiki',
    {
      router: '3-5e2f283f21admin29-regex-Wiki-router@http',
      host: 'wiki.example.com',
      upstream_service: '3-5e2f283f21admin29-regex-Wiki-service',
      tls: null,
    },
    { tcp: { enabled: true, service_id: 'ssh-pool' } },
  );
  const { config } = generatePangolin([wiki], { services: [sshPool] });
  t.deepEqual(
    entry(config, 'tcp', 'routers', '3-wiki_tcp'),
    {
      entryPoints: ['tcp'],
      // Traefik: 'invalid rule: "HostSNI(`wiki.example.com`)" , has HostSNI matcher, but no TLS on router'
      rule: 'HostSNI(`*`)',
      service: 'ssh-pool',
    },
    'no tls: the HTTP router has none, so no SNI to match',
  );
  t.is(entry(config, 'tcp', 'services', '3-wiki_tcp'), undefined);
  t.deepEqual(entry(config, 'tcp', 'services', 'ssh-pool'), { loadBalancer: sshPool.config });
  t.deepEqual(schemaWarnings(config), []);
});

test('TCP without TLS: an sni_rule naming a host is emitted as written, with a warning that Traefik disables it', (t) => {
  const sshPool: Service = {
    id: 'ssh-pool',
    name: 'SSH pool',
    type: 'loadBalancer',
    protocol: 'tcp',
    config: { servers: [{ address: '10.0.0.2:22' }] },
  };
  const fields = { router: '3-5e2f283f21admin29-regex-Wiki-router@http', host: 'wiki.example.com', tls: null };
  const named = resource('3-wiki', fields, {
    tcp: { enabled: true, service_id: 'ssh-pool', sni_rule: 'HostSNI(`wiki.example.com`)' },
  });
  const { config, result } = generatePangolin([named], { services: [sshPool] });
  t.is((entry(config, 'tcp', 'routers', '3-wiki_tcp') as Config).rule, 'HostSNI(`wiki.example.com`)');
  t.regex(result.resources['3-wiki'].warnings.join('\n'), /names a host but the router has no TLS/);
  const star = resource('3-wiki', fields, { tcp: { enabled: true, service_id: 'ssh-pool', sni_rule: 'HostSNI(`*`)' } });
  t.deepEqual(generatePangolin([star], { services: [sshPool] }).result.resources['3-wiki'].warnings, []);
});

test('TCP router is omitted with a warning when no server can be derived', (t) => {
  const weighted: Service = {
    id: 'split',
    name: 'Split',
    type: 'weighted',
    protocol: 'http',
    config: { services: [{ name: 'app-v2', weight: 1 }] },
  };
  const res = grafana({ service_id: 'split' }, { tcp: { enabled: true } });
  const { config, result } = generatePangolin([res], { services: [weighted, appV2] });
  t.is(entry(config, 'tcp', 'routers', '2-grafana-router_tcp'), undefined);
  t.regex(result.resources['2-grafana-router'].warnings[0], /TCP router omitted/);
  t.is(router(config, '2-Grafana-router').service, 'split', 'the HTTP patch still applies');
});
