/**
 * Plugins that cannot load (bad manifests, errors and time-outs while registering, import errors)
 * fail alone: they are reported with their error, their prefix answers 503 plugin_unavailable, and
 * the server and the other plugins keep working.
 */
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { buildLoaderOnly, buildWithPlugins, pluginReports } from './helpers.ts';

/** Every method and sub-path of the prefix answers 503 plugin_unavailable. */
async function assertUnavailable(
  t: import('ava').ExecutionContext,
  app: FastifyInstance,
  prefix: string,
): Promise<void> {
  for (const [method, url] of [
    ['GET', prefix],
    ['GET', `${prefix}/`],
    ['POST', `${prefix}/things`],
    ['DELETE', `${prefix}/a/b?c=d`],
    ['HEAD', `${prefix}/x`],
  ] as const) {
    const res = await app.inject({ method, url });
    t.is(res.statusCode, 503, `${method} ${url}`);
    if (method !== 'HEAD') t.is(res.json().id, 'plugin_unavailable', `${method} ${url}`);
  }
}

/** The example plugin still serves, and so does the host. */
async function assertOthersWork(t: import('ava').ExecutionContext, app: FastifyInstance): Promise<void> {
  t.is((await app.inject({ method: 'GET', url: '/api/ext/hello/greeting' })).statusCode, 200);
  t.is((await app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200);
}

test('plugins with a broken manifest fail with their error; their prefix answers 503; the rest keeps working', async (t) => {
  const app = await buildWithPlugins(t, {
    plugins: ['hello', 'bad-yaml', 'missing-field', 'bad-name', 'reserved-name', 'escape-entry', 'no-manifest'],
  });
  const reports = await pluginReports(app);
  const expected: Record<string, RegExp> = {
    'bad-yaml': /^plugin\.yaml: invalid YAML: .*line 3/,
    'missing-field': /^plugin\.yaml: version: Expected required property/,
    Bad_Name: /^plugin\.yaml: name "Bad_Name" must be a slug/,
    backup: /^plugin\.yaml: name "backup" is reserved for a built-in group/,
    'escape-entry': /^plugin\.yaml: entry "\.\.\/probe\/lib\/index\.mjs" points outside the plugin directory/,
    'no-manifest': /^plugin\.yaml is missing$/,
  };
  for (const [name, message] of Object.entries(expected)) {
    const report = reports.get(name);
    t.is(report?.status, 'failed', name);
    t.regex(report?.error?.message ?? '', message, name);
    t.is(report?.error?.stack, null, `${name}: a manifest problem has no stack`);
    t.deepEqual(report?.routes, []);
    t.is(report?.loaded_at, null);
  }
  t.is(reports.get('bad-yaml')?.dir, 'bad-yaml');
  t.is(reports.get('Bad_Name')?.dir, 'bad-name', 'reported under the name the manifest gives');
  for (const prefix of [
    '/api/ext/bad-yaml',
    '/api/ext/missing-field',
    '/api/ext/backup',
    '/api/ext/escape-entry',
    '/api/ext/no-manifest',
  ]) {
    await assertUnavailable(t, app, prefix);
  }
  // A name that is not a valid path segment has no prefix to answer on.
  t.is((await app.inject({ method: 'GET', url: '/api/ext/Bad_Name' })).statusCode, 404);
  await assertOthersWork(t, app);
});

test('a plugin that throws while registering fails alone, directly, from a nested plugin or from onReady', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'throws', 'throws-nested', 'throws-on-ready'] });
  const reports = await pluginReports(app);
  for (const [name, message] of [
    ['throws', 'throws: cannot start'],
    ['throws-nested', 'throws-nested: inner plugin failed'],
    ['throws-on-ready', 'throws-on-ready: not ready'],
  ]) {
    t.like(reports.get(name), { status: 'failed', routes: [], loaded_at: null, error: { message } }, name);
    t.regex(reports.get(name)?.error?.stack ?? '', /index\.mjs/, `${name}: the stack points into the plugin`);
    await assertUnavailable(t, app, `/api/ext/${name}`);
  }
  // The route added before the throw never reached the real app.
  t.is((await app.inject({ method: 'GET', url: '/api/ext/throws/half' })).json().id, 'plugin_unavailable');
  t.is(reports.get('hello')?.status, 'loaded');
  await assertOthersWork(t, app);
});

test('an entry with a syntax error fails with the import error', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'syntax-error'] });
  const report = (await pluginReports(app)).get('syntax-error');
  t.is(report?.status, 'failed');
  t.regex(report?.error?.message ?? '', /missing \) after argument list|Unexpected/);
  t.truthy(report?.error?.stack);
  await assertUnavailable(t, app, '/api/ext/syntax-error');
  await assertOthersWork(t, app);
});

test('an entry whose default export is not a function fails', async (t) => {
  const app = await buildWithPlugins(t, { plugins: ['hello', 'not-function'] });
  const report = (await pluginReports(app)).get('not-function');
  t.is(report?.status, 'failed');
  t.regex(report?.error?.message ?? '', /default export must be a Fastify plugin function.*got object/);
  await assertUnavailable(t, app, '/api/ext/not-function');
  await assertOthersWork(t, app);
});

test('a plugin whose registration never finishes fails after the time limit; the others load', async (t) => {
  // the build returning at all proves the hung registration was cut off (the plugin never resolves);
  // how long that took depends on the machine's load, so no wall-clock bound here
  const app = await buildLoaderOnly(t, { plugins: ['hangs', 'custom-prefix'], registerTimeoutMs: 1000 });
  // A bare loader has no system group: read its registry directly.
  const records = new Map(app.extPlugins.list().map((r) => [r.name, r]));
  t.like(records.get('hangs'), {
    status: 'failed',
    error: { message: 'registration did not finish within 1000 ms', stack: null },
    routes: [],
  });
  t.like(records.get('custom-prefix'), { status: 'loaded', error: null }, 'a plugin after the hung one still loads');
  await assertUnavailable(t, app, '/api/ext/hangs');
  t.is((await app.inject({ method: 'GET', url: '/api/tools/custom/ping' })).statusCode, 200);
});

test("when the host's own plugin time limit strikes first, the hung plugin still fails alone", async (t) => {
  // Fastify's pluginTimeout (1.5 s) ends the plugin's scope before the loader's own limit (5 s) does.
  const app = await buildLoaderOnly(t, {
    plugins: ['hangs', 'custom-prefix'],
    registerTimeoutMs: 5000,
    hostPluginTimeoutMs: 1500,
  });
  const records = new Map(app.extPlugins.list().map((r) => [r.name, r]));
  t.like(records.get('hangs'), {
    status: 'failed',
    error: { message: 'registration did not finish within 1500 ms', stack: null },
    routes: [],
  });
  t.like(records.get('custom-prefix'), { status: 'loaded', error: null });
  await assertUnavailable(t, app, '/api/ext/hangs');
});

test('each outcome is logged: loaded, failed with its error, disabled', async (t) => {
  const lines: Record<string, unknown>[] = [];
  await buildLoaderOnly(t, {
    plugins: ['custom-prefix', 'throws', 'incompatible', 'needs-missing'],
    enabled: ['custom-prefix', 'throws', 'incompatible'],
    registerTimeoutMs: 5000,
    logLines: lines,
  });
  const about = (plugin: string) =>
    lines.filter((l) => l.plugin === plugin && typeof l.msg === 'string' && l.msg.startsWith(`plugin ${plugin}`));
  t.like(about('custom-prefix')[0], {
    level: 30,
    msg: 'plugin custom-prefix loaded',
    prefix: '/api/tools/custom',
    routes: 1,
  });
  t.like(about('throws')[0], {
    level: 50,
    msg: 'plugin throws failed to load: throws: cannot start',
    err: { message: 'throws: cannot start' },
  });
  t.like(about('incompatible')[0], {
    level: 40,
    msg: 'plugin incompatible is incompatible: plugin needs host API ^2.0.0; this host provides 1.0.0',
  });
  t.like(about('needs-missing')[0], { level: 30, msg: 'plugin needs-missing is present but not enabled' });
});
