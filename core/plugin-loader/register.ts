/**
 * Registers one planned plugin in the real app: import, trial in a throwaway instance, then the
 * real registration in an encapsulated scope under its prefix. Every failure on the way, including
 * avvio's own errors and time-outs, ends in the `after` callback, which swallows it so the host
 * keeps booting, records it and mounts the 503 fallback.
 */
import type { FastifyInstance } from 'fastify';
import { openPluginStore, pluginOptions } from './context.ts';
import { classifyRoutes, importEntry, isTimeout, LoadTimeoutError, trialRegister } from './load.ts';
import type { PlannedPlugin } from './plan.ts';
import type { ExtPluginRoute } from './types.ts';
import { mountUnavailable } from './unavailable.ts';

/** A problem the loader found itself: reported without a stack. */
export class LoaderProblem extends Error {}

export interface RegisterContext {
  app: FastifyInstance;
  generation: number;
  timeoutMs: number;
  /** Plugins by name, to check at registration time that dependencies really loaded. */
  byName: Map<string, PlannedPlugin>;
}

/** Queues the plugin's registration; its record becomes `loaded` or `failed` once avvio gets to it. */
export function registerPlugin(ctx: RegisterContext, planned: PlannedPlugin): void {
  const { app, generation, timeoutMs } = ctx;
  const { record } = planned;
  const manifest = planned.manifest!;
  const routes: ExtPluginRoute[] = [];
  // Set once avvio has given up on the scope (its own time limit), so late work must not touch it.
  let settled = false;

  app
    .register(
      async function extPluginScope(scope) {
        const unloaded = manifest.dependencies
          .map((d) => ctx.byName.get(d))
          .find((dep) => dep !== undefined && dep.record.status !== 'loaded');
        if (unloaded) throw new LoaderProblem(`dependency ${unloaded.record.name} is ${unloaded.record.status}`);
        const plugin = await importEntry(manifest.entryPath, generation, timeoutMs);
        const input = {
          name: record.name,
          config: planned.config ?? {},
          store: await openPluginStore(app, record.name),
        };
        if (settled) return;
        await trialRegister(plugin, pluginOptions(app, input), record.prefix, timeoutMs);
        if (settled) return;
        classifyRoutes(scope, routes);
        scope.register(plugin, pluginOptions(app, input));
      },
      { prefix: record.prefix },
    )
    .after((err) => {
      // One-argument form: avvio hands the error over and clears it, so it does not reach the host's ready().
      settled = true;
      if (err) {
        const timedOut = isTimeout(err);
        record.status = 'failed';
        record.error = {
          // Our own time-outs say what timed out; Fastify's pluginTimeout (the host's limit) may strike first.
          message:
            timedOut && !(err instanceof LoadTimeoutError)
              ? `registration did not finish within ${app.initialConfig.pluginTimeout} ms`
              : err.message,
          stack: timedOut || err instanceof LoaderProblem ? null : (err.stack ?? null),
        };
        app.log.error(
          { plugin: record.name, dir: record.dir, err },
          `plugin ${record.name} failed to load: ${record.error.message}`,
        );
        if (planned.ownsPrefix) mountUnavailable(app, record);
      } else {
        record.status = 'loaded';
        record.routes = routes;
        record.loaded_at = app.now().toISOString();
        app.log.info(
          { plugin: record.name, version: record.version, prefix: record.prefix, routes: routes.length },
          `plugin ${record.name} loaded`,
        );
      }
    });
}
