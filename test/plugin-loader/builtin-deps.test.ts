/**
 * A third-party plugin may depend on any built-in group by the group's name (API.md §6). The
 * reserved names come from the registered group list, so a group's name and its registration
 * cannot drift apart again (they did: `backup`/`container` were reserved while the groups
 * registered as `backups`/`containers`, and a plugin could depend on neither).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { builtinGroups } from '../../plugins/index.ts';
import { build, tempDir } from '../helpers/build.ts';
import { pluginReports } from './helpers.ts';

test('a plugin depending on each built-in group loads and serves its route', async (t) => {
  const dir = path.join(await tempDir(t, 'sm-plugins-'), 'ext-plugins');
  const names = builtinGroups.map((group) => group.name);
  for (const group of names) {
    const plugin = path.join(dir, `needs-${group}`);
    await mkdir(plugin, { recursive: true });
    await writeFile(
      path.join(plugin, 'plugin.yaml'),
      `name: needs-${group}\nversion: 1.0.0\napi_version: ^1.0.0\nentry: index.mjs\ndependencies: [${group}]\n`,
    );
    await writeFile(
      path.join(plugin, 'index.mjs'),
      `export default async function (app) { app.get('/ping', async () => ({ group: ${JSON.stringify(group)} })); }\n`,
    );
  }
  const app = await build(t, { config: { auth: { mode: 'off' }, plugins: { dir, enabled: ['*'], config: {} } } });
  const reports = await pluginReports(app);
  for (const group of names) {
    t.like(reports.get(`needs-${group}`), { status: 'loaded', error: null }, group);
    const res = await app.inject({ method: 'GET', url: `/api/ext/needs-${group}/ping` });
    t.is(res.statusCode, 200, group);
    t.deepEqual(res.json(), { group }, group);
  }
  t.true(
    names.includes('backup') && names.includes('container'),
    'the groups of /api/backup and /api/container are named like their URLs',
  );
});

test('every built-in group name is reserved as a plugin name and as a prefix', async (t) => {
  const dir = path.join(await tempDir(t, 'sm-plugins-'), 'ext-plugins');
  for (const group of ['backup', 'container', 'events']) {
    const plugin = path.join(dir, `taken-${group}`);
    await mkdir(plugin, { recursive: true });
    await writeFile(
      path.join(plugin, 'plugin.yaml'),
      `name: ${group}\nversion: 1.0.0\napi_version: ^1.0.0\nentry: index.mjs\n`,
    );
    await writeFile(path.join(plugin, 'index.mjs'), 'export default async function () {}\n');
    const prefixed = path.join(dir, `under-${group}`);
    await mkdir(prefixed, { recursive: true });
    await writeFile(
      path.join(prefixed, 'plugin.yaml'),
      `name: under-${group}\nversion: 1.0.0\napi_version: ^1.0.0\nentry: index.mjs\nprefix: /api/${group}/extra\n`,
    );
    await writeFile(path.join(prefixed, 'index.mjs'), 'export default async function () {}\n');
  }
  const app = await build(t, { config: { auth: { mode: 'off' }, plugins: { dir, enabled: ['*'], config: {} } } });
  const reports = await pluginReports(app);
  for (const group of ['backup', 'container', 'events']) {
    t.like(
      reports.get(group),
      { status: 'failed', error: { message: `plugin.yaml: name "${group}" is reserved for a built-in group` } },
      group,
    );
    t.like(
      reports.get(`under-${group}`),
      {
        status: 'failed',
        error: { message: `plugin.yaml: prefix "/api/${group}/extra" lies under the built-in prefix /api/${group}` },
      },
      group,
    );
  }
});
