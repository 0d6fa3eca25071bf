/**
 * GET|PUT /api/static/settings (docs/API.md "Static settings"): the compose file and plugins-local
 * directory set through the API, validated like PUT /api/plugins/configpath, kept in settings.yaml
 * across restarts, and seen by the entry point, apply and vendoring routes without a restart.
 */
import test from 'ava';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../core/app.ts';
import { loadConfig } from '../../core/config/load.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { logCapture } from '../auth/support.ts';
import { build, tempDir } from '../helpers/build.ts';
import { zipEntries } from '../helpers/zip.ts';
import { harness, call } from '../resources/support.ts';

const STATIC = `entryPoints:
  web:
    address: ":80"
  tcp-2222:
    address: ":2222"
experimental:
  plugins:
    stamp:
      moduleName: github.com/example/stamp
      version: v0.1.0
`;

const COMPOSE = `# the Pangolin stack
services:
  gerbil:
    image: fosrl/gerbil:1.0.0 # pinned
    ports:
      - "80:80"
  traefik:
    image: traefik:v3.5
    network_mode: service:gerbil
`;

const settingsOf = async (app: FastifyInstance) => (await call(app, { url: '/api/static/settings' })).body;
const put = (app: FastifyInstance, payload: unknown) =>
  call(app, { method: 'PUT', url: '/api/static/settings', payload: payload as object });

test('GET reports env and unset sources; PUT persists both paths in settings.yaml, null returns to the env value', async (t) => {
  const dir = await tempDir(t, 'sm-static-settings-');
  const envCompose = path.join(dir, 'env-compose.yml');
  await writeFile(envCompose, COMPOSE);
  const app = await build(t, { config: { auth: { mode: 'off' }, stack: { compose_file: envCompose } } });
  t.deepEqual(await settingsOf(app), {
    compose_file: { path: envCompose, source: 'env', exists: true, writable: true },
    plugins_local_dir: { path: null, source: 'unset', exists: false, writable: false },
  });

  const compose = path.join(dir, 'stack', 'docker-compose.yaml');
  await mkdir(path.dirname(compose));
  const localDir = path.join(dir, 'plugins-local');
  const res = await put(app, { compose_file: compose, plugins_local_dir: `${localDir}/` });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.headers['x-restart-required'], undefined, 'Traefik reads neither path: nothing to restart');
  t.deepEqual(res.body, {
    compose_file: { path: compose, source: 'settings', exists: false, writable: true },
    plugins_local_dir: { path: localDir, source: 'settings', exists: false, writable: true },
  });
  const file = await readFile(path.join(app.store.dataDir, 'settings.yaml'), 'utf8');
  t.true(file.includes(`compose_file: ${compose}`), file);
  t.true(file.includes(`plugins_local_dir: ${localDir}\n`), file);

  // a field left out keeps its value; null clears settings.yaml's, so the env value applies again
  const cleared = await put(app, { compose_file: null });
  t.is(cleared.status, 200, JSON.stringify(cleared.body));
  t.deepEqual(cleared.body.compose_file, { path: envCompose, source: 'env', exists: true, writable: true });
  t.like(cleared.body.plugins_local_dir, { path: localDir, source: 'settings' });
  t.false((await readFile(path.join(app.store.dataDir, 'settings.yaml'), 'utf8')).includes('compose_file'));
  // an empty body changes nothing
  const same = await put(app, {});
  t.is(same.status, 200);
  t.deepEqual(same.body, cleared.body);
});

test('PUT answers 422 naming the field for every invalid path, and writes neither field when one is invalid', async (t) => {
  const dir = await tempDir(t, 'sm-static-settings-');
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  await writeFile(path.join(dir, 'plain'), '');
  await mkdir(path.join(dir, 'compose.yml'));
  const good = { compose: path.join(dir, 'docker-compose.yml'), local: path.join(dir, 'plugins-local') };
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['compose relative', { compose_file: 'docker-compose.yml' }, '/compose_file'],
    ['compose not yaml', { compose_file: path.join(dir, 'docker-compose.json') }, '/compose_file'],
    ['compose dot-dot segment', { compose_file: `${dir}/../x/docker-compose.yml` }, '/compose_file'],
    ['compose too long', { compose_file: `/${'a'.repeat(4100)}.yml` }, '/compose_file'],
    ['compose parent missing', { compose_file: path.join(dir, 'missing', 'compose.yml') }, '/compose_file'],
    ['compose parent is a file', { compose_file: path.join(dir, 'plain', 'compose.yml') }, '/compose_file'],
    ['compose is a directory', { compose_file: path.join(dir, 'compose.yml') }, '/compose_file'],
    ['compose empty', { compose_file: '' }, '/compose_file'],
    ['compose not a string', { compose_file: 42 }, '/compose_file'],
    ['dir relative', { plugins_local_dir: 'plugins-local' }, '/plugins_local_dir'],
    ['dir dot-dot segment', { plugins_local_dir: `${dir}/../plugins-local` }, '/plugins_local_dir'],
    ['dir too long', { plugins_local_dir: `/${'a'.repeat(4100)}` }, '/plugins_local_dir'],
    ['dir parent missing', { plugins_local_dir: path.join(dir, 'missing', 'plugins-local') }, '/plugins_local_dir'],
    ['dir parent is a file', { plugins_local_dir: path.join(dir, 'plain', 'plugins-local') }, '/plugins_local_dir'],
    ['dir is a file', { plugins_local_dir: path.join(dir, 'plain') }, '/plugins_local_dir'],
    ['dir empty', { plugins_local_dir: '' }, '/plugins_local_dir'],
    ['dir not a string', { plugins_local_dir: ['/tmp'] }, '/plugins_local_dir'],
    // one valid field beside an invalid one: nothing is written (checked below)
    ['valid compose, invalid dir', { compose_file: good.compose, plugins_local_dir: 'x' }, '/plugins_local_dir'],
    ['invalid compose, valid dir', { compose_file: 'x.yml', plugins_local_dir: good.local }, '/compose_file'],
  ];
  // root may write anywhere: a directory that cannot be created needs an unprivileged process
  if (process.getuid?.() !== 0) {
    const locked = path.join(dir, 'locked');
    await mkdir(locked);
    await chmod(locked, 0o555);
    cases.push(['dir not creatable', { plugins_local_dir: path.join(locked, 'plugins-local') }, '/plugins_local_dir']);
  } else t.log('running as root: the "parent not writable" case cannot happen and is not checked');
  for (const [name, payload, pointer] of cases) {
    const res = await put(app, payload);
    t.is(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
    t.is(res.body.id, 'validation_failed', name);
    t.is(typeof res.body.message, 'string', name);
    t.deepEqual(
      res.body.details.map((d: { path: string }) => d.path),
      [pointer],
      `${name}: ${JSON.stringify(res.body)}`,
    );
  }
  t.deepEqual(await settingsOf(app), {
    compose_file: { path: null, source: 'unset', exists: false, writable: false },
    plugins_local_dir: { path: null, source: 'unset', exists: false, writable: false },
  });
  const files = await readdir(app.store.dataDir);
  if (files.includes('settings.yaml')) {
    const text = await readFile(path.join(app.store.dataDir, 'settings.yaml'), 'utf8');
    t.false(/compose_file|plugins_local_dir/.test(text), text);
  }
});

test('the settings survive an app restart on the same data dir', async (t) => {
  const dir = await tempDir(t, 'sm-static-settings-');
  const dataDir = path.join(dir, 'data');
  const compose = path.join(dir, 'docker-compose.yml');
  await writeFile(compose, COMPOSE);
  const localDir = path.join(dir, 'plugins-local');
  await mkdir(localDir);
  const config = { auth: { mode: 'off' } };
  const first = await build(t, { dataDir, config });
  t.is((await put(first, { compose_file: compose, plugins_local_dir: localDir })).status, 200);
  await first.close();

  const second = await build(t, { dataDir, config });
  t.deepEqual(await settingsOf(second), {
    compose_file: { path: compose, source: 'settings', exists: true, writable: true },
    plugins_local_dir: { path: localDir, source: 'settings', exists: true, writable: true },
  });
});

test('entry points, apply and vendoring answer 503 without the files and use them right after the PUT, no restart', async (t) => {
  const dir = await tempDir(t, 'sm-static-settings-');
  const staticFile = path.join(dir, 'traefik_config.yml');
  const compose = path.join(dir, 'docker-compose.yml');
  await writeFile(staticFile, STATIC);
  await writeFile(compose, COMPOSE);
  // apply's first check is that a Docker engine is configured: a socket path that exists passes it
  const socket = path.join(dir, 'docker.sock');
  await writeFile(socket, '');
  const { app } = await harness(t, {
    config: {
      proxy: { static_config_path: staticFile, plugins_local_dir: '' },
      stack: { compose_file: '', containers: ['traefik', 'gerbil'] },
      docker: { host: '', socket },
    },
  });
  await app.proxyConfig.regenerate();

  // before: Gerbil's ports unknown, apply of gerbil and vendoring not configured
  const before = await call(app, { url: '/api/static/entrypoints' });
  t.is(before.status, 200, JSON.stringify(before.body));
  t.true(
    before.body.every((e: { published_on_gerbil: boolean | null }) => e.published_on_gerbil === null),
    JSON.stringify(before.body),
  );
  const applyBefore = await call(app, { method: 'POST', url: '/api/static/apply', payload: { services: ['gerbil'] } });
  t.is(applyBefore.status, 503, JSON.stringify(applyBefore.body));
  t.is(applyBefore.body.id, 'not_configured');
  t.regex(applyBefore.body.message, /compose file/);
  const zip = zipEntries([
    { name: '.traefik.yml', data: 'displayName: Stamp\ntype: middleware\nimport: github.com/example/stamp\n' },
    { name: 'stamp.go', data: 'package stamp\n' },
  ]);
  const upload = {
    method: 'POST' as const,
    url: '/api/plugins/stamp/vendor',
    headers: { 'content-type': 'application/zip' },
    payload: zip,
  };
  const vendorBefore = await call(app, upload);
  t.is(vendorBefore.status, 503, JSON.stringify(vendorBefore.body));
  t.is(vendorBefore.body.id, 'not_configured');
  t.is(await readFile(staticFile, 'utf8'), STATIC, 'nothing written');

  // the plugins-local directory does not exist yet: vendoring creates it
  const localDir = path.join(dir, 'plugins-local');
  const res = await put(app, { compose_file: compose, plugins_local_dir: localDir });
  t.is(res.status, 200, JSON.stringify(res.body));

  const after = await call(app, { url: '/api/static/entrypoints' });
  const byName = Object.fromEntries(after.body.map((e: { name: string }) => [e.name, e]));
  t.like(byName.web, { published_on_gerbil: true });
  t.like(byName['tcp-2222'], { published_on_gerbil: false });
  const sync = await call(app, { method: 'POST', url: '/api/static/entrypoints/sync', payload: {} });
  t.is(sync.status, 200, JSON.stringify(sync.body));
  t.is(sync.body.compose_file, compose);
  t.true(sync.body.published.includes('2222:2222'), JSON.stringify(sync.body));
  t.true((await readFile(compose, 'utf8')).includes('      - "2222:2222"'));
  // apply gets past the compose check and asks the engine (a plain file here, so it is unavailable: 502)
  const applyAfter = await call(app, { method: 'POST', url: '/api/static/apply', payload: { services: ['gerbil'] } });
  t.is(applyAfter.status, 502, JSON.stringify(applyAfter.body));
  t.is(applyAfter.body.id, 'upstream_unavailable');
  t.regex(applyAfter.body.message, /^Docker at unix:/);

  const vendored = await call(app, upload);
  t.is(vendored.status, 200, JSON.stringify(vendored.body));
  t.true(
    (await stat(path.join(localDir, 'src', 'github.com', 'example', 'stamp', '.traefik.yml'))).isFile(),
    'unpacked into the directory set through the API',
  );
  t.regex(await readFile(staticFile, 'utf8'), /localPlugins:\n {4}stamp:\n {6}moduleName: github.com\/example\/stamp/);
  t.like((await settingsOf(app)).plugins_local_dir, { path: localDir, exists: true });
});

test('STACK_COMPOSE_FILE and PROXY_PLUGINS_LOCAL_DIR overridden by settings.yaml: one start warning each, naming PUT /api/static/settings', async (t) => {
  const dir = await tempDir(t, 'sm-static-settings-');
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  await writeFile(
    path.join(dataDir, 'settings.yaml'),
    'compose_file: /srv/stack/docker-compose.yml\nplugins_local_dir: /srv/plugins-local\n',
  );
  const warningsWith = async (env: Record<string, string>) => {
    const config = loadConfig({
      env: { CONFIG_FILE: path.join(import.meta.dirname, '..', 'helpers', 'empty.yaml'), ...env },
      overrides: {
        log: { level: 'info' },
        storage: { data_dir: dataDir },
        plugins: { dir: path.join(dir, 'no-plugins') },
        templates: { seed: false },
        history: { enabled: false },
        auth: { mode: 'off' },
        docker: { host: '', socket: path.join(dir, 'no-docker.sock') },
        backup: { dir: path.join(dir, 'backups') },
      },
    });
    const logs = logCapture();
    const app = await buildApp({ config, groups: builtinGroups, logStream: logs.stream });
    await app.ready();
    await app.close();
    return logs
      .lines()
      .filter((l) => l.level === 40 && typeof l.variable === 'string')
      .map((l) => [l.variable, l.env_value, l.file_value, l.change_with]);
  };
  t.deepEqual(
    await warningsWith({ STACK_COMPOSE_FILE: '/stack/docker-compose.yml', PROXY_PLUGINS_LOCAL_DIR: '/plugins-local' }),
    [
      ['STACK_COMPOSE_FILE', '/stack/docker-compose.yml', '/srv/stack/docker-compose.yml', 'PUT /api/static/settings'],
      ['PROXY_PLUGINS_LOCAL_DIR', '/plugins-local', '/srv/plugins-local', 'PUT /api/static/settings'],
    ],
  );
  t.deepEqual(
    await warningsWith({ STACK_COMPOSE_FILE: '/srv/stack/docker-compose.yml' }),
    [],
    'the same value, or no variable: nothing to say',
  );
});
