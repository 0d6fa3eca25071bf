/**
 * Environment variables that only seed a data file (API.md §2.11, issue 24 item 5): set later with
 * another value they change nothing, and one warning at start says so, naming the variable, both
 * values and the API call that changes the file.
 */
import test, { type ExecutionContext } from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApp } from '../../core/app.ts';
import { loadConfig } from '../../core/config/load.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { logCapture } from '../auth/support.ts';
import { tempDir } from '../helpers/build.ts';

/** Starts the app on `dataDir` with these environment variables, as `npm start` reads them; returns its warnings. */
async function start(t: ExecutionContext, dataDir: string, env: Record<string, string>) {
  const config = loadConfig({
    env: { CONFIG_FILE: path.join(import.meta.dirname, '..', 'helpers', 'empty.yaml'), ...env },
    overrides: {
      log: { level: 'info' },
      storage: { data_dir: dataDir },
      plugins: { dir: path.join(dataDir, '..', 'no-plugins') },
      templates: { seed: false },
      auth: { mode: 'off' },
      docker: { host: '', socket: path.join(dataDir, '..', 'no-docker.sock') },
      backup: { dir: path.join(dataDir, '..', 'backups') },
    },
  });
  const logs = logCapture();
  const app = await buildApp({ config, groups: builtinGroups, logStream: logs.stream });
  await app.ready();
  await app.close();
  return logs.lines().filter((l) => l.level === 40 && typeof l.variable === 'string');
}

const FIRST = {
  PANGOLIN_URL: 'http://127.0.0.1:9/api/v1',
  TRAEFIK_API_URL: 'http://127.0.0.1:9',
  ACTIVE_DATA_SOURCE: 'pangolin',
  PROXY_STATIC_CONFIG: '/etc/traefik/traefik_config.yml',
};

test('a seeding variable that differs from its data file: one warning naming it, both values and the API call', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  t.deepEqual(await start(t, dataDir, FIRST), [], 'the first start seeds datasources.yaml: nothing to warn about');
  // the static config path set through the API lives in settings.yaml
  await writeFile(path.join(dataDir, 'settings.yaml'), 'proxy_static_config_path: /srv/traefik/traefik.yml\n');
  t.deepEqual(await start(t, dataDir, FIRST).then((w) => w.map((l) => l.variable)), ['PROXY_STATIC_CONFIG']);

  const warnings = await start(t, dataDir, {
    ...FIRST,
    PANGOLIN_URL: 'http://127.0.0.1:10/api/v1/', // a trailing slash is not a difference
    ACTIVE_DATA_SOURCE: 'traefik',
  });
  t.deepEqual(
    warnings.map((l) => [l.variable, l.env_value, l.file, l.file_value, l.change_with]),
    [
      [
        'PANGOLIN_URL',
        'http://127.0.0.1:10/api/v1',
        'datasources.yaml',
        'http://127.0.0.1:9/api/v1',
        'PUT /api/datasource/pangolin',
      ],
      ['ACTIVE_DATA_SOURCE', 'traefik', 'datasources.yaml', 'pangolin', 'PUT /api/datasource/active'],
      [
        'PROXY_STATIC_CONFIG',
        '/etc/traefik/traefik_config.yml',
        'settings.yaml',
        '/srv/traefik/traefik.yml',
        'PUT /api/plugins/configpath',
      ],
    ],
  );
  for (const line of warnings) {
    const message = String(line.msg);
    for (const part of [line.variable, line.env_value, line.file_value, line.change_with])
      t.true(message.includes(String(part)), message);
  }
});

test('no warning when the variable is unset (the default differs) or equal to the file', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await start(t, dataDir, FIRST);
  t.deepEqual(await start(t, dataDir, {}), [], 'defaults (http://pangolin:3001) are not variables');
  t.deepEqual(await start(t, dataDir, { PANGOLIN_URL: 'http://127.0.0.1:9/api/v1/' }), []);
  // middleware-manager's name for the same setting (API.md §7) is named as such
  const legacy = await start(t, dataDir, { PANGOLIN_API_URL: 'http://127.0.0.1:11/api/v1' });
  t.deepEqual(
    legacy.map((l) => l.variable),
    ['PANGOLIN_API_URL'],
  );
});
