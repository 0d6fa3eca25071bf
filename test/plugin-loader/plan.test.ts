/** Which plugins load and in what order: enabled list, api_version, dependencies, prefixes, config_schema. */
import test from 'ava';
import type { Candidate } from '../../core/plugin-loader/discover.ts';
import type { Manifest } from '../../core/plugin-loader/manifest.ts';
import { planPlugins } from '../../core/plugin-loader/plan.ts';
import { createConfigValidator } from '../../core/plugin-loader/plugin-config.ts';
import { reservedNames } from '../../core/plugin-loader/prefixes.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { buildWithPlugins, pluginReports } from './helpers.ts';

test('a plugin present but not enabled is disabled and its prefix answers 404', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'custom-prefix'], enabled: ['hello'] });
  const report = (await pluginReports(app)).get('custom-prefix');
  t.like(report, {
    status: 'disabled',
    error: null,
    routes: [],
    loaded_at: null,
    version: '1.0.0',
    prefix: '/api/tools/custom',
  });
  const res = await app.inject({ method: 'GET', url: '/api/tools/custom/ping' });
  t.is(res.statusCode, 404);
  t.is(res.json().id, 'not_found');
});

test('with plugins.enabled empty nothing loads and every plugin is disabled', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'throws'], enabled: [] });
  t.deepEqual(
    [...(await pluginReports(app)).values()].map((r) => [r.name, r.status]),
    [
      ['hello', 'disabled'],
      ['throws', 'disabled'],
    ],
  );
  t.is((await app.inject({ method: 'GET', url: '/api/ext/hello/greeting' })).statusCode, 404);
});

test('an unsatisfied api_version marks the plugin incompatible and its prefix answers 503', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'incompatible'] });
  const report = (await pluginReports(app)).get('incompatible');
  t.like(report, {
    status: 'incompatible',
    api_version: '^2.0.0',
    error: { message: 'plugin needs host API ^2.0.0; this host provides 1.0.0', stack: null },
  });
  const res = await app.inject({ method: 'GET', url: '/api/ext/incompatible' });
  t.is(res.statusCode, 503);
  t.is(res.json().id, 'plugin_unavailable');
  t.regex(res.json().message, /incompatible/);
});

test('a missing dependency fails the plugin; a failed dependency fails its dependents', async (t) => {
  const app = await buildWithPlugins(t, {
    plugins: ['hello', 'probe', 'needs-missing'],
    pluginConfig: { hello: { greeting: 42 } }, // hello fails on its config, so probe (depends on hello) fails too
  });
  const reports = await pluginReports(app);
  t.like(reports.get('needs-missing'), {
    status: 'failed',
    error: { message: 'missing dependency not-installed: no plugin has that name' },
  });
  t.like(reports.get('hello'), { status: 'failed' });
  t.like(reports.get('probe'), { status: 'failed', error: { message: 'dependency hello is failed' } });
  for (const prefix of ['/api/ext/needs-missing/ping', '/api/ext/probe/config']) {
    t.is((await app.inject({ method: 'GET', url: prefix })).statusCode, 503, prefix);
  }
});

test('a dependency on a plugin that is not enabled fails the dependent', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'probe'], enabled: ['probe'] });
  t.like((await pluginReports(app)).get('probe'), {
    status: 'failed',
    error: { message: 'dependency hello is disabled' },
  });
});

test('config_schema validation failure fails the plugin with the Ajv errors', async (t) => {
  const app = await buildWithPlugins(t, {
    plugins: ['hello'],
    pluginConfig: { hello: { greeting: 42, colour: 'red' } },
  });
  const report = (await pluginReports(app)).get('hello');
  t.is(report?.status, 'failed');
  t.is(
    report?.error?.message,
    'plugins.config.hello is invalid: must NOT have additional properties; /greeting must be string',
  );
  t.is((await app.inject({ method: 'GET', url: '/api/ext/hello/greeting' })).statusCode, 503);
});

test("a prefix under another plugin's prefix fails; one under a built-in prefix fails; a free custom prefix works", async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'clash', 'under-builtin', 'custom-prefix'] });
  const reports = await pluginReports(app);
  t.is(reports.get('hello')?.status, 'loaded', 'the plugin on its own default prefix keeps it');
  t.like(reports.get('clash'), {
    status: 'failed',
    error: { message: 'prefix /api/ext/hello/clash clashes with prefix /api/ext/hello of plugin hello' },
  });
  t.like(reports.get('under-builtin'), {
    status: 'failed',
    error: { message: 'plugin.yaml: prefix "/api/health/extra" lies under the built-in prefix /api/health' },
  });
  t.is(reports.get('custom-prefix')?.status, 'loaded');
  // The loser of a clash answers nothing of its own: the prefix belongs to hello.
  t.is((await app.inject({ method: 'GET', url: '/api/ext/hello/clash/ping' })).json().id, 'not_found');
  t.is((await app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200);
  t.is((await app.inject({ method: 'GET', url: '/api/tools/custom/ping' })).statusCode, 200);
});

test('a name in plugins.enabled without a directory is reported as failed', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello'], enabled: ['hello', 'ghost'] });
  t.like((await pluginReports(app)).get('ghost'), {
    dir: null,
    status: 'failed',
    prefix: '/api/ext/ghost',
    error: { message: 'plugin "ghost" is enabled but no directory in the plugins dir holds it' },
  });
  t.is((await app.inject({ method: 'GET', url: '/api/ext/ghost/x' })).statusCode, 503);
});

// Unit level: the order itself, and the cases a fixture directory cannot make cheaply.

function candidate(name: string, extra: Partial<Manifest> = {}, dir = name): Candidate {
  return {
    dir,
    outcome: {
      ok: true,
      manifest: {
        name,
        version: '1.0.0',
        api_version: '^1.0.0',
        entry: 'index.mjs',
        entryPath: `/x/${dir}/index.mjs`,
        prefix: `/api/ext/${name}`,
        dependencies: [],
        ...extra,
      },
    },
  };
}

function plan(candidates: Candidate[], enabled = ['*']) {
  return planPlugins({
    candidates,
    enabled,
    sections: {},
    reserved: reservedNames(builtinGroups.map((group) => group.name)),
    hasBuiltin: (name) => name === 'health',
    validateConfig: createConfigValidator(),
  });
}

test('plugins load after their dependencies, whatever their names', (t) => {
  const result = plan([
    candidate('alpha', { dependencies: ['zulu', 'health'] }),
    candidate('mike', { dependencies: ['alpha'] }),
    candidate('zulu'),
  ]);
  t.deepEqual(
    result.load.map((p) => p.record.name),
    ['zulu', 'alpha', 'mike'],
  );
});

test('a dependency cycle fails every plugin in it, and a built-in dependency that is not registered fails', (t) => {
  const result = plan([
    candidate('a', { dependencies: ['b'] }),
    candidate('b', { dependencies: ['a'] }),
    candidate('c', { dependencies: ['backup'] }),
    candidate('d'),
  ]);
  t.deepEqual(
    result.load.map((p) => p.record.name),
    ['d'],
  );
  const errors = Object.fromEntries(result.all.map((p) => [p.record.name, p.record.error?.message]));
  t.is(errors.a, 'dependency cycle among a, b');
  t.is(errors.b, 'dependency cycle among a, b');
  t.is(errors.c, 'missing dependency backup: that built-in group is not registered');
});

test('two directories with the same plugin name: the first keeps it, the second fails', (t) => {
  const result = plan([candidate('twin', {}, 'a-twin'), candidate('twin', {}, 'b-twin')]);
  t.deepEqual(
    result.load.map((p) => p.record.dir),
    ['a-twin'],
  );
  t.like(result.all.find((p) => p.record.dir === 'b-twin')?.record, {
    status: 'failed',
    error: { message: 'name "twin" is already used by the plugin in directory a-twin' },
  });
});

test("a custom prefix equal to another plugin's default prefix loses to it", (t) => {
  const result = plan([candidate('aaa', { prefix: '/api/ext/zzz' }), candidate('zzz')]);
  t.deepEqual(
    result.load.map((p) => p.record.name),
    ['zzz'],
  );
  t.like(result.all[0].record, {
    name: 'aaa',
    status: 'failed',
    error: { message: 'prefix /api/ext/zzz clashes with prefix /api/ext/zzz of plugin zzz' },
  });
  t.false(result.all[0].ownsPrefix, 'the loser mounts no 503 fallback over the winner');
});
