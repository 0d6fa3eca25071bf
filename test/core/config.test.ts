import test from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../core/config/load.ts';
import { tempDir } from '../helpers/build.ts';

const noLocal = { CONFIG_FILE: path.join(import.meta.dirname, '..', 'helpers', 'empty.yaml') };

test('defaults load and validate', (t) => {
  const config = loadConfig({ env: noLocal });
  t.is(config.server.port, 3456);
  t.is(config.server.host, '0.0.0.0');
  t.is(config.auth.mode, 'ops');
  t.deepEqual(config.discovery.exclude, ['*-redirect']);
});

test('environment variables win and are coerced to the setting type', (t) => {
  const config = loadConfig({
    env: {
      ...noLocal,
      PORT: '8080',
      AUTH_MODE: 'all',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      TRUST_PROXY: '2',
    },
  });
  t.is(config.server.port, 8080);
  t.is(config.auth.mode, 'all');
  t.deepEqual(config.cors.origins, ['https://a.example', 'https://b.example']);
  t.is(config.server.trust_proxy, 2);
});

test('a bad value stops loading with exit code 78 and names the setting', (t) => {
  const err = t.throws(() => loadConfig({ env: { ...noLocal, PORT: 'eighty' } }), { instanceOf: ConfigError });
  t.is(err?.exitCode, 78);
  t.is(err?.key, 'server.port');
  const mode = t.throws(() => loadConfig({ env: { ...noLocal, AUTH_MODE: 'sometimes' } }), { instanceOf: ConfigError });
  t.is(mode?.key, 'auth.mode');
});

test('CONFIG_FILE overrides the defaults and *_FILE variables read secrets from files', async (t) => {
  const dir = await tempDir(t);
  await writeFile(path.join(dir, 'local.yaml'), 'server:\n  port: 9000\nlog:\n  level: warn\n');
  await writeFile(path.join(dir, 'token'), 'provider-secret\n');
  const config = loadConfig({
    env: { CONFIG_FILE: path.join(dir, 'local.yaml'), PROVIDER_TOKEN_FILE: path.join(dir, 'token') },
  });
  t.is(config.server.port, 9000);
  t.is(config.log.level, 'warn');
  t.is(config.provider.token, 'provider-secret');
});

test('middleware-manager variable names are read as fallbacks only', (t) => {
  t.is(
    loadConfig({ env: { ...noLocal, PANGOLIN_API_URL: 'http://old:3001/api/v1' } }).datasources.pangolin_url,
    'http://old:3001/api/v1',
  );
  t.is(
    loadConfig({
      env: { ...noLocal, PANGOLIN_API_URL: 'http://old:3001/api/v1', PANGOLIN_URL: 'http://new:3001/api/v1' },
    }).datasources.pangolin_url,
    'http://new:3001/api/v1',
  );
});
