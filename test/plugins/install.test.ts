import test from 'ava';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { defaultKey } from '../../plugins/plugins/key.ts';
import { assertError, call, pluginsApp, startFakeCatalogue, STATIC_CONFIG } from './support.ts';

/**
 * The YAML library keeps every comment but moves a comment that follows a mapping key on the same
 * line (`crowdsec: # the bouncer`) onto its own line above the mapping's content: the one change
 * an edit makes outside the edited entry.
 */
const REWRITTEN = STATIC_CONFIG.replace('    crowdsec: # the bouncer\n', '    crowdsec:\n      # the bouncer\n');

test('defaultKey: last segment, cut at @, minus .git then -plugin, lower-cased', (t) => {
  t.is(defaultKey('github.com/fosrl/badger'), 'badger');
  t.is(defaultKey('github.com/PascalMinder/geoblock'), 'geoblock');
  t.is(defaultKey('github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin'), 'crowdsec-bouncer-traefik');
  t.is(defaultKey('github.com/traefik/plugin-rewritebody'), 'plugin-rewritebody');
  t.is(defaultKey('github.com/Me/Foo-Plugin.git'), 'foo');
  t.is(defaultKey('github.com/me/tool@v2'), 'tool');
  t.is(defaultKey('gitlab.com/me/my.plugin'), null);
});

test('POST /api/plugins/install defaults the version to latestVersion and the key from the module; keeps comments and key order; writes .bak', async (t) => {
  const catalogue = await startFakeCatalogue(t);
  const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG, catalogueUrl: catalogue.url });
  const r = await call(app, {
    method: 'POST',
    url: '/api/plugins/install',
    payload: { module_name: 'github.com/PascalMinder/geoblock' },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  t.is(r.headers['x-restart-required'], 'true');
  t.deepEqual(r.body, {
    key: 'geoblock',
    module_name: 'github.com/PascalMinder/geoblock',
    version: 'v0.3.3',
    static_config_path: file,
    backup_path: `${file}.bak`,
    changed: true,
    restart_required: true,
  });
  const expected = REWRITTEN.replace(
    '      version: v1.4.4\n',
    '      version: v1.4.4\n    geoblock:\n      moduleName: github.com/PascalMinder/geoblock\n      version: v0.3.3\n',
  );
  t.is(await readFile(file, 'utf8'), expected);
  t.is(await readFile(`${file}.bak`, 'utf8'), STATIC_CONFIG);

  // the catalogue key rule with the alias moduleName; the .bak rotates to the previous bytes
  const second = await call(app, {
    method: 'POST',
    url: '/api/plugins/install',
    payload: { moduleName: 'github.com/traefik/plugin-rewritebody', version: 'v0.3.0' },
  });
  t.is(second.status, 201, JSON.stringify(second.body));
  t.is(second.body.key, 'plugin-rewritebody');
  t.is(await readFile(`${file}.bak`, 'utf8'), expected);
  const list = await call(app, { url: '/api/plugins' });
  t.deepEqual(
    list.body.map((p: any) => p.key),
    ['badger', 'crowdsec', 'geoblock', 'myplugin', 'plugin-rewritebody'],
  );
});

test('POST /api/plugins/install is idempotent (200, file untouched), 409 already_exists for another version, force replaces in place', async (t) => {
  const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG });
  const same = await call(app, {
    method: 'POST',
    url: '/api/plugins/install',
    payload: {
      module_name: 'github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin',
      version: 'v1.4.4',
      key: 'crowdsec',
    },
  });
  t.is(same.status, 200, JSON.stringify(same.body));
  t.like(same.body, { changed: false, backup_path: null, restart_required: true });
  t.is(await readFile(file, 'utf8'), STATIC_CONFIG);
  await t.throwsAsync(stat(`${file}.bak`));

  const other = {
    module_name: 'github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin',
    version: 'v1.4.2',
    key: 'crowdsec',
  };
  assertError(
    t,
    await call(app, { method: 'POST', url: '/api/plugins/install', payload: other }),
    409,
    'already_exists',
  );
  t.is(await readFile(file, 'utf8'), STATIC_CONFIG);
  // a local plugin key is taken too
  assertError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/me/myplugin', version: 'v1.0.0', key: 'myplugin' },
    }),
    409,
    'already_exists',
  );

  const forced = await call(app, { method: 'POST', url: '/api/plugins/install', payload: { ...other, force: true } });
  t.is(forced.status, 201, JSON.stringify(forced.body));
  t.is(await readFile(file, 'utf8'), REWRITTEN.replace('      version: v1.4.4\n', '      version: v1.4.2\n'));
});

test('POST /api/plugins/install creates a missing file; the mTLS plugin check sees the new plugin', async (t) => {
  const { app, file } = await pluginsApp(t);
  const before = await call(app, { url: '/api/mtls/plugin/check' });
  t.false(before.body.installed);
  const r = await call(app, {
    method: 'POST',
    url: '/api/plugins/install',
    payload: { module_name: 'github.com/smerschjohann/mtlswhitelist', version: 'v0.3.0' },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  t.is(r.body.backup_path, null);
  t.deepEqual(parse(await readFile(file, 'utf8')), {
    experimental: {
      plugins: { mtlswhitelist: { moduleName: 'github.com/smerschjohann/mtlswhitelist', version: 'v0.3.0' } },
    },
  });
  const after = await call(app, { url: '/api/mtls/plugin/check' });
  t.like(after.body, { installed: true, key: 'mtlswhitelist', version: 'v0.3.0', static_config_path: file });
});

test('POST /api/plugins/install: 503 without a path, 409 conflict when experimental is not a mapping or the YAML is invalid', async (t) => {
  const unset = await pluginsApp(t, { text: null });
  assertError(
    t,
    await call(unset.app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/fosrl/badger', version: 'v1.0.0' },
    }),
    503,
    'not_configured',
  );

  const { app, file } = await pluginsApp(t, { text: 'api:\n  insecure: true\nexperimental: [1, 2]\n' });
  const body = assertError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/fosrl/badger', version: 'v1.0.0' },
    }),
    409,
    'conflict',
  );
  t.is(body.details[0].path, `${file}:3`);
  await writeFile(file, 'experimental:\n  plugins: "text"\n');
  assertError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/fosrl/badger', version: 'v1.0.0' },
    }),
    409,
    'conflict',
  );
  await writeFile(file, 'a: 1\na: 2\n');
  const dup = assertError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/fosrl/badger', version: 'v1.0.0' },
    }),
    409,
    'conflict',
  );
  t.is(dup.details[0].path, `${file}:2`);
  t.is(await readFile(file, 'utf8'), 'a: 1\na: 2\n');
});

test('POST /api/plugins/install: 502 without version when the catalogue is unreachable and nothing is cached; 422 when the module is not in it', async (t) => {
  const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG });
  assertError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/PascalMinder/geoblock' },
    }),
    502,
    'upstream_unavailable',
  );
  const catalogue = await startFakeCatalogue(t);
  const other = await pluginsApp(t, { text: STATIC_CONFIG, catalogueUrl: catalogue.url });
  assertError(
    t,
    await call(other.app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/nobody/nothing' },
    }),
    422,
    'validation_failed',
  );
  // provider plugins are not middleware entries
  assertError(
    t,
    await call(other.app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: { module_name: 'github.com/stack-labs/traefik-provider-staticroutes' },
    }),
    422,
    'validation_failed',
  );
  t.is(await readFile(file, 'utf8'), STATIC_CONFIG);
});

const BAD_BODIES: Array<[string, unknown, string]> = [
  ['no module', {}, 'validation_failed'],
  ['bad module', { module_name: 'not a module' }, 'validation_failed'],
  ['module without path', { module_name: 'github.com' }, 'validation_failed'],
  ['bad version', { module_name: 'github.com/fosrl/badger', version: '1.2.0' }, 'validation_failed'],
  ['bad key', { module_name: 'github.com/fosrl/badger', version: 'v1.2.0', key: '-x' }, 'validation_failed'],
  ['long key', { module_name: 'github.com/fosrl/badger', version: 'v1.2.0', key: 'a'.repeat(64) }, 'validation_failed'],
  ['underivable key', { module_name: 'github.com/fosrl/bad.ger', version: 'v1.2.0' }, 'validation_failed'],
  ['force not bool', { module_name: 'github.com/fosrl/badger', version: 'v1.2.0', force: 'yes' }, 'validation_failed'],
  ['array body', [1], 'validation_failed'],
];

for (const [name, payload, id] of BAD_BODIES) {
  test(`POST /api/plugins/install rejects a bad body (${name}) with 4xx and leaves the file byte-identical`, async (t) => {
    const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG });
    const r = await call(app, { method: 'POST', url: '/api/plugins/install', payload: payload as object });
    t.true(r.status >= 400 && r.status < 500, JSON.stringify(r.body));
    t.is(r.body.id, id);
    t.is(await readFile(file, 'utf8'), STATIC_CONFIG);
  });
}

test('POST /api/plugins/install answers 400 for unparsable JSON and 415 for another media type', async (t) => {
  const { app, file } = await pluginsApp(t, { text: STATIC_CONFIG });
  assertError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: '{"module_name":',
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'invalid_json',
  );
  assertError(
    t,
    await call(app, {
      method: 'POST',
      url: '/api/plugins/install',
      payload: 'module_name=x',
      headers: { 'content-type': 'text/plain' },
    }),
    415,
    'unsupported_media_type',
  );
  t.is(await readFile(file, 'utf8'), STATIC_CONFIG);
});
