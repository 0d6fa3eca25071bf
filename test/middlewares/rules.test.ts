import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { tempDir } from '../helpers/build.ts';
import { assertClientError, buildApp, call, fakeReferences, snapshot } from './support.ts';

const post = (app: Awaited<ReturnType<typeof buildApp>>, payload: object) =>
  call(app, { method: 'POST', url: '/api/middlewares', payload });
const crowdsec = {
  name: 'CrowdSec',
  type: 'plugin',
  config: { crowdsec: { enabled: true, crowdsecLapiHost: 'crowdsec:8080' } },
};

test('plugin config needs exactly one well-formed key', async (t) => {
  const app = await buildApp(t);
  const none = await post(app, { ...crowdsec, config: {} });
  assertClientError(t, none, 422, 'validation_failed');
  t.is(none.body.details[0].path, '/config');
  assertClientError(t, await post(app, { ...crowdsec, config: { a: {}, b: {} } }), 422, 'validation_failed');
  const badKey = await post(app, { ...crowdsec, config: { 'bad key': {} } });
  assertClientError(t, badKey, 422, 'validation_failed');
  t.is(badKey.body.details[0].path, '/config/bad key');
  const notObject = await post(app, { ...crowdsec, config: { crowdsec: 'on' } });
  assertClientError(t, notObject, 422, 'validation_failed');
  t.is(notObject.body.details[0].path, '/config/crowdsec');
});

test('a plugin middleware warns when no Traefik static config path is set', async (t) => {
  const app = await buildApp(t);
  const created = await post(app, crowdsec);
  t.is(created.status, 201);
  t.deepEqual(created.body.warnings, ['plugin "crowdsec" cannot be checked: no Traefik static config path is set']);
});

test('a plugin middleware warns unless its key is declared in the static config (settings.yaml wins)', async (t) => {
  const dir = await tempDir(t);
  const declared = path.join(dir, 'traefik.yml');
  await writeFile(
    declared,
    'experimental:\n  plugins:\n    crowdsec:\n      moduleName: github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin\n      version: v1.4.4\n  localPlugins:\n    geoblock:\n      moduleName: github.com/PascalMinder/geoblock\n',
  );
  const other = path.join(dir, 'other.yml');
  await writeFile(other, 'entryPoints:\n  web:\n    address: ":80"\n');
  const app = await buildApp(t, { config: { proxy: { static_config_path: declared } } });
  t.deepEqual((await post(app, crowdsec)).body.warnings, []);
  t.deepEqual(
    (await post(app, { name: 'Geo', type: 'plugin', config: { geoblock: { countries: ['DE'] } } })).body.warnings,
    [],
  );
  const missing = await post(app, { name: 'Mystery', type: 'plugin', config: { mystery: {} } });
  t.is(missing.status, 201);
  t.is(missing.body.warnings.length, 1);
  t.true(
    missing.body.warnings[0].includes(
      `plugin "mystery" is not declared under experimental.plugins or experimental.localPlugins of the Traefik static config ${declared}`,
    ),
  );

  await app.settings.update((s) => ({ ...s, proxy_static_config_path: other }));
  t.regex(
    (await call(app, { method: 'GET', url: '/api/middlewares/crowdsec' })).body.warnings[0],
    /plugin "crowdsec" is not declared/,
  );
  // the file is re-read when it changes
  await writeFile(
    other,
    'experimental:\n  plugins:\n    crowdsec:\n      moduleName: x/y\n    extra: {moduleName: a/b}\n',
  );
  t.deepEqual((await call(app, { method: 'GET', url: '/api/middlewares/crowdsec' })).body.warnings, []);
  await app.settings.update((s) => ({ ...s, proxy_static_config_path: path.join(dir, 'gone.yml') }));
  t.regex(
    (await call(app, { method: 'GET', url: '/api/middlewares/crowdsec' })).body.warnings[0],
    /cannot be checked: Traefik static config .*gone\.yml cannot be read/,
  );
});

test('ipWhiteList is accepted with a deprecation warning', async (t) => {
  const app = await buildApp(t);
  const created = await post(app, {
    name: 'Old allow list',
    type: 'ipWhiteList',
    config: { sourceRange: ['10.0.0.0/8'] },
  });
  t.is(created.status, 201);
  t.regex(created.body.warnings[0], /ipWhiteList is deprecated/);
});

test('numbers Traefik cannot decode are refused: fractions in integer fields, durations without a unit', async (t) => {
  // each of these made Traefik 3.7.15 refuse the whole provider document (e2e middlewares tests)
  const app = await buildApp(t);
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['rateLimit', { average: 10, burst: 1.5 }, '/config/burst'],
    ['rateLimit', { average: 2.5 }, '/config/average'],
    ['rateLimit', { average: '1.5' }, '/config/average'],
    ['rateLimit', { average: 10, period: 1.5 }, '/config/period'],
    ['rateLimit', { average: 10, period: '1.5' }, '/config/period'],
    ['forwardAuth', { address: 'http://auth', maxBodySize: 10.5 }, '/config/maxBodySize'],
    ['circuitBreaker', { expression: 'NetworkErrorRatio() > 0.5', checkPeriod: 'soon' }, '/config/checkPeriod'],
    ['retry', { attempts: 2, initialInterval: '100' + 'xs' }, '/config/initialInterval'],
  ];
  for (const [type, config, pointer] of refused) {
    const reply = await post(app, { name: 'n', type, config });
    assertClientError(t, reply, 422, 'validation_failed');
    t.true(
      reply.body.details.some((d: { path: string }) => d.path === pointer),
      `${type} ${JSON.stringify(config)}: ${JSON.stringify(reply.body)}`,
    );
  }
  // whole numbers, digits and Go durations are what Traefik reads; a plugin's own fields are its business
  const accepted: Array<[string, Record<string, unknown>]> = [
    ['rateLimit', { average: '100', burst: 5, period: 60 }],
    ['rateLimit', { average: 1, period: '60' }],
    ['rateLimit', { average: 1, period: '1.5s' }],
    ['plugin', { custom: { period: 1.5, burst: 0.5, timeout: 'later' } }],
  ];
  for (const [i, [type, config]] of accepted.entries()) {
    const reply = await post(app, { name: `ok${i}`, type, config });
    t.is(reply.status, 201, `${type} ${JSON.stringify(config)}: ${JSON.stringify(reply.body)}`);
  }
});

test('empty objects Traefik cannot decode are refused; compress, contentType and ipStrategy may be empty', async (t) => {
  // each made Traefik 3.7.15 refuse the whole provider document: "<key> cannot be a standalone element"
  const app = await buildApp(t);
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['headers', {}, '/config'],
    ['grpcWeb', {}, '/config'],
    ['stripPrefix', {}, '/config'],
    ['rateLimit', { average: 5, sourceCriterion: {} }, '/config/sourceCriterion'],
    ['headers', { customRequestHeaders: {}, frameDeny: true }, '/config/customRequestHeaders'],
    ['forwardAuth', { address: 'http://auth', tls: {} }, '/config/tls'],
    ['passTLSClientCert', { pem: true, info: { subject: {} } }, '/config/info/subject'],
  ];
  for (const [type, config, pointer] of refused) {
    const reply = await post(app, { name: 'n', type, config });
    assertClientError(t, reply, 422, 'validation_failed');
    t.true(
      reply.body.details.some((d: { path: string }) => d.path === pointer),
      `${type} ${JSON.stringify(config)}: ${JSON.stringify(reply.body)}`,
    );
  }
  const accepted: Array<[string, Record<string, unknown>]> = [
    ['compress', {}],
    ['contentType', {}],
    ['ipAllowList', { sourceRange: ['10.0.0.0/8'], ipStrategy: {} }],
    ['plugin', { custom: {} }],
  ];
  for (const [i, [type, config]] of accepted.entries()) {
    const reply = await post(app, { name: `ok${i}`, type, config });
    t.is(reply.status, 201, `${type} ${JSON.stringify(config)}: ${JSON.stringify(reply.body)}`);
  }
});

test('chains need 1–50 existing members, accept name@provider and reject cycles', async (t) => {
  const app = await buildApp(t);
  await post(app, { id: 'headers', name: 'Headers', type: 'headers', config: { frameDeny: true } });
  await post(app, { id: 'limit', name: 'Limit', type: 'rateLimit', config: { average: 10 } });
  const before = await snapshot(app.store.dataDir);
  const chain = (members: unknown[], extra: object = {}) =>
    post(app, { name: `Chain ${Math.random()}`, type: 'chain', config: { middlewares: members }, ...extra });
  assertClientError(t, await chain([]), 422, 'validation_failed');
  const tooMany = await chain(Array.from({ length: 51 }, () => 'headers'));
  assertClientError(t, tooMany, 422, 'validation_failed');
  t.is(tooMany.body.details[0].path, '/config/middlewares');
  const missing = await chain(['headers', 'ghost', 'crowdsec@file', 'phantom']);
  assertClientError(t, missing, 422, 'validation_failed');
  t.deepEqual(missing.body.details, [
    { path: '/config/middlewares/1', message: 'middleware ghost does not exist' },
    { path: '/config/middlewares/3', message: 'middleware phantom does not exist' },
  ]);
  assertClientError(t, await chain(['self'], { id: 'self' }), 422, 'validation_failed');
  t.deepEqual(await snapshot(app.store.dataDir), before);

  t.is((await chain(['headers', 'limit', 'crowdsec@file'], { id: 'inner' })).status, 201);
  t.is((await chain(['inner'], { id: 'outer' })).status, 201);
  const cycle = await call(app, {
    method: 'PUT',
    url: '/api/middlewares/inner',
    payload: { name: 'Inner', type: 'chain', config: { middlewares: ['headers', 'outer'] } },
  });
  assertClientError(t, cycle, 422, 'validation_failed');
  t.deepEqual(cycle.body.details, [
    { path: '/config/middlewares/1', message: 'creates a cycle: inner → outer → inner' },
  ]);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/middlewares/headers' })).body.used_by, [
    '/api/middlewares/inner',
  ]);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/middlewares/inner' })).body.used_by, [
    '/api/middlewares/outer',
  ]);
});

test('DELETE answers 409 in_use while a chain lists the middleware, even with force', async (t) => {
  const app = await buildApp(t);
  await post(app, { id: 'headers', name: 'Headers', type: 'headers', config: { frameDeny: true } });
  await post(app, { id: 'secure', name: 'Secure', type: 'chain', config: { middlewares: ['headers'] } });
  const refs = fakeReferences({ headers: ['/api/resources/web'] });
  app.middlewares.addReferenceSource(refs.source);
  const both = await call(app, { method: 'DELETE', url: '/api/middlewares/headers' });
  t.deepEqual(
    both.body.details.map((d: { path: string }) => d.path),
    ['/api/middlewares/secure', '/api/resources/web'],
  );
  for (const url of ['/api/middlewares/headers?force=true', '/api/middlewares/headers?force=1']) {
    const refused = await call(app, { method: 'DELETE', url });
    assertClientError(t, refused, 409, 'in_use');
    t.deepEqual(
      refused.body.details.map((d: { path: string }) => d.path),
      ['/api/middlewares/secure'],
    );
  }
  // a refused forced delete leaves the resource assignments alone
  t.deepEqual(refs.removed, []);
  t.is((await app.inject({ method: 'DELETE', url: '/api/middlewares/secure' })).statusCode, 204);
  t.is((await app.inject({ method: 'DELETE', url: '/api/middlewares/headers?force=true' })).statusCode, 204);
  t.deepEqual(refs.removed, ['headers']);
});

test('reference sources feed used_by; DELETE answers 409 in_use unless force=true removes the assignments', async (t) => {
  const app = await buildApp(t);
  await post(app, { id: 'auth', name: 'Auth', type: 'forwardAuth', config: { address: 'http://auth' } });
  const refs = fakeReferences({ auth: ['/api/resources/web', '/api/resources/app'] });
  const unregister = app.middlewares.addReferenceSource(refs.source);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/middlewares/auth' })).body.used_by, [
    '/api/resources/app',
    '/api/resources/web',
  ]);
  t.deepEqual(app.middlewares.usedBy('auth'), ['/api/resources/app', '/api/resources/web']);
  const refused = await call(app, { method: 'DELETE', url: '/api/middlewares/auth?force=false' });
  assertClientError(t, refused, 409, 'in_use');
  t.deepEqual(
    refused.body.details.map((d: { path: string }) => d.path),
    ['/api/resources/app', '/api/resources/web'],
  );
  t.deepEqual(refs.removed, []);
  t.is((await app.inject({ method: 'DELETE', url: '/api/middlewares/auth?force=true' })).statusCode, 204);
  t.deepEqual(refs.removed, ['auth']);
  unregister();

  // a source that cannot remove its references blocks even a forced delete
  await post(app, { id: 'auth2', name: 'Auth 2', type: 'forwardAuth', config: { address: 'http://auth' } });
  app.middlewares.addReferenceSource(fakeReferences({ auth2: ['/api/resources/x'] }, false).source);
  assertClientError(t, await call(app, { method: 'DELETE', url: '/api/middlewares/auth2?force=true' }), 409, 'in_use');
});

test('middlewaresView gives third-party plugins read-only copies as the API shows them', async (t) => {
  const app = await buildApp(t);
  const created = await post(app, {
    id: 'auth',
    name: 'Auth',
    type: 'forwardAuth',
    config: { address: 'http://auth' },
  });
  const listed = app.middlewaresView.list();
  t.deepEqual(listed, [created.body]);
  (listed[0].config as { address: string }).address = 'http://evil';
  t.deepEqual(app.middlewaresView.get('auth'), created.body);
  t.is(app.middlewaresView.get('nope'), undefined);
});
