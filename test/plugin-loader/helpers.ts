/** Helpers for loader tests: a temp PLUGINS_DIR filled from fixtures, and an app built over it. */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import Fastify, { type FastifyInstance } from 'fastify';
import authPlugin from '../../core/auth/index.ts';
import { installErrorHandling } from '../../core/errors/handler.ts';
import pluginLoader from '../../core/plugin-loader/index.ts';
import { openStore } from '../../core/store/index.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { build, tempDir, testConfig } from '../helpers/build.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'plugins');
export const EXAMPLE = path.join(ROOT, 'examples', 'hello-plugin');

/** Copies plugins into a fresh PLUGINS_DIR: `hello` is the example plugin, other names are fixtures. */
export async function pluginsDir(t: ExecutionContext, names: string[]): Promise<string> {
  const dir = path.join(await tempDir(t, 'sm-plugins-'), 'ext-plugins');
  for (const name of names)
    await cp(name === 'hello' ? EXAMPLE : path.join(FIXTURES, name), path.join(dir, name), { recursive: true });
  return dir;
}

export interface PluginAppOptions {
  plugins: string[];
  enabled?: string[];
  pluginConfig?: Record<string, unknown>;
  authMode?: 'off' | 'ops' | 'all';
  dataDir?: string;
}

/** An app over a PLUGINS_DIR holding `plugins` (all enabled unless `enabled` says otherwise). */
export async function buildWithPlugins(t: ExecutionContext, options: PluginAppOptions): Promise<FastifyInstance> {
  const dir = await pluginsDir(t, options.plugins);
  return build(t, {
    dataDir: options.dataDir,
    config: {
      auth: { mode: options.authMode ?? 'off' },
      plugins: { dir, enabled: options.enabled ?? ['*'], config: options.pluginConfig ?? {} },
    },
  });
}

export type PluginReport = {
  name: string;
  dir: string | null;
  status: string;
  prefix: string;
  version: string | null;
  api_version: string | null;
  error: { message: string; stack: string | null } | null;
  routes: { method: string; url: string }[];
  loaded_at: string | null;
};

/** GET /api/system/plugins as a map by name. */
export async function pluginReports(app: FastifyInstance): Promise<Map<string, PluginReport>> {
  const res = await app.inject({ method: 'GET', url: '/api/system/plugins' });
  if (res.statusCode !== 200) throw new Error(`GET /api/system/plugins answered ${res.statusCode}: ${res.body}`);
  return new Map((res.json() as PluginReport[]).map((p) => [p.name, p]));
}

/**
 * The loader alone on a bare Fastify instance (error handling, store, auth), for options buildApp
 * does not pass through, such as a short `registerTimeoutMs`.
 */
export async function buildLoaderOnly(
  t: ExecutionContext,
  options: PluginAppOptions & {
    registerTimeoutMs: number;
    hostPluginTimeoutMs?: number;
    logLines?: Record<string, unknown>[];
  },
): Promise<FastifyInstance> {
  const dir = await pluginsDir(t, options.plugins);
  const dataDir = options.dataDir ?? path.join(await tempDir(t), 'data');
  const config = testConfig(dataDir, {
    auth: { mode: options.authMode ?? 'off' },
    plugins: { dir, enabled: options.enabled ?? ['*'], config: options.pluginConfig ?? {} },
  });
  const lines = options.logLines;
  const logger = lines ? { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } } : false;
  const app = Fastify({ logger, pluginTimeout: options.hostPluginTimeoutMs });
  installErrorHandling(app, config.server.body_limit);
  app.decorate('config', config);
  app.decorate('now', () => new Date());
  const store = await openStore({ dataDir, logger: app.log });
  app.decorate('store', store);
  app.addHook('onClose', async () => store.close());
  await app.register(authPlugin);
  await app.register(pluginLoader, {
    config,
    builtinGroups: builtinGroups.map((group) => group.name),
    generation: 1,
    registerTimeoutMs: options.registerTimeoutMs,
  });
  t.teardown(() => app.close());
  await app.ready();
  return app;
}
