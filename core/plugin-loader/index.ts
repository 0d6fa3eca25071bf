/**
 * Third-party plugin loader (API.md §6): discovers PLUGINS_DIR, validates manifests, loads the
 * enabled plugins in dependency order under their prefixes, and keeps a failing plugin from taking
 * the server down (its prefix answers 503 plugin_unavailable). Records are exposed as `app.extPlugins`.
 */
import path from 'node:path';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { AppConfig } from '../config/schema.ts';
import { discoverPlugins } from './discover.ts';
import { planPlugins, type PlannedPlugin } from './plan.ts';
import { createConfigValidator } from './plugin-config.ts';
import { registerPlugin } from './register.ts';
import { createRegistry } from './registry.ts';
import { mountUnavailable } from './unavailable.ts';
import { reservedNames } from './prefixes.ts';

export type * from './types.ts';
export { watchPluginsDir, type PluginsWatcher, type PluginsWatchOptions } from './watch.ts';

export interface PluginLoaderOptions {
  config: AppConfig;
  /** Names of the built-in groups (buildApp's group list): reserved, and satisfy a dependency of that name. */
  builtinGroups: readonly string[];
  /** Restart counter of this app instance; part of the entries' cache-busting query. */
  generation: number;
  /** Time limit for importing and registering one plugin (API.md §6: 10 s). */
  registerTimeoutMs?: number;
}

export const DEFAULT_REGISTER_TIMEOUT_MS = 10_000;

/** Loads the enabled third-party plugins after the built-in groups. */
async function pluginLoader(app: FastifyInstance, options: PluginLoaderOptions): Promise<void> {
  const { dir, enabled, config: sections } = options.config.plugins;
  const reserved = reservedNames(options.builtinGroups);
  const plan = planPlugins({
    candidates: await discoverPlugins(path.resolve(dir), reserved),
    enabled,
    sections,
    reserved,
    hasBuiltin: (name) => app.hasPlugin(name),
    validateConfig: createConfigValidator(),
  });
  app.decorate('extPlugins', createRegistry(plan.all, options.generation));
  for (const planned of plan.all) if (planned.record.status !== 'pending') reportUnloaded(app, planned);

  const context = {
    app,
    generation: options.generation,
    timeoutMs: options.registerTimeoutMs ?? DEFAULT_REGISTER_TIMEOUT_MS,
    byName: new Map(plan.load.map((p) => [p.record.name, p])),
  };
  // One avvio plugin each, so every plugin gets its own time budget and its errors stay its own.
  for (const planned of plan.load) registerPlugin(context, planned);
}

/** Logs a plugin the plan already settled, and mounts the 503 fallback for failed or incompatible ones. */
function reportUnloaded(app: FastifyInstance, { record, ownsPrefix }: PlannedPlugin): void {
  const fields = { plugin: record.name, dir: record.dir, prefix: record.prefix };
  if (record.status === 'disabled') {
    app.log.info(fields, `plugin ${record.name} is present but not enabled`);
    return;
  }
  app.log[record.status === 'incompatible' ? 'warn' : 'error'](
    fields,
    `plugin ${record.name} ${record.status === 'incompatible' ? 'is incompatible' : 'failed'}: ${record.error?.message}`,
  );
  if (ownsPrefix) mountUnavailable(app, record);
}

export default fp(pluginLoader, {
  name: 'plugin-loader',
  dependencies: ['auth'],
  decorators: { fastify: ['config', 'store', 'now'] },
});
