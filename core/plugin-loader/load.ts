/** Imports a plugin's entry and proves it registers, in a throwaway Fastify instance, before the real app sees it. */
import { stat } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ExtPluginFunction, ExtPluginOptions, ExtPluginRoute } from './types.ts';

/** A plugin took longer than the time limit (API.md §6: 10 s). */
export class LoadTimeoutError extends Error {}

const PLUGIN_TIMEOUT_CODES = new Set(['AVV_ERR_PLUGIN_EXEC_TIMEOUT', 'FST_ERR_PLUGIN_TIMEOUT']);

/** Whether an error is a time-out: ours, or Fastify's (avvio's) own plugin timeout. */
export function isTimeout(err: unknown): boolean {
  return err instanceof LoadTimeoutError || PLUGIN_TIMEOUT_CODES.has((err as { code?: string } | null)?.code ?? '');
}

/** Rejects with a LoadTimeoutError when `work` has not settled within `ms`; the work itself cannot be cancelled. */
export async function withTimeout<T>(work: PromiseLike<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    // unref: a plugin that hangs forever must not keep the process alive after the app has closed.
    timer = setTimeout(() => reject(new LoadTimeoutError(message)), ms).unref();
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Imports the entry with a cache-busting query (`?v=<generation>-<mtime>`), so a rebuilt app instance
 * loads changed code, and returns its default export, which must be a function.
 */
export async function importEntry(
  entryPath: string,
  generation: number,
  timeoutMs: number,
): Promise<ExtPluginFunction> {
  const { mtimeMs } = await stat(entryPath);
  const url = `${pathToFileURL(entryPath).href}?v=${generation}-${Math.trunc(mtimeMs)}`;
  // Top-level await in a plugin module could hang forever: the same time limit as registration.
  const module = await withTimeout(
    import(url) as Promise<{ default?: unknown }>,
    timeoutMs,
    `importing the entry did not finish within ${timeoutMs} ms`,
  );
  if (typeof module.default !== 'function') {
    throw new TypeError(
      `the entry's default export must be a Fastify plugin function (async (app, opts) => ...), got ${module.default === undefined ? 'no default export' : typeof module.default}`,
    );
  }
  return module.default as ExtPluginFunction;
}

/** Routes registered in a plugin's scope default to the operations class (API.md §6); `config.role` is kept. */
export function classifyRoutes(scope: FastifyInstance, routes?: ExtPluginRoute[]): void {
  scope.addHook('onRoute', (route) => {
    // Forced, not defaulted: a third-party route must not make itself public.
    route.config = { ...(route.config as object), auth: 'operations' };
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // HEAD twins of GET routes are implied; listing them would only double the report.
      if (method === 'HEAD' && routes?.some((r) => r.method === 'GET' && r.url === route.url)) continue;
      routes?.push({ method, url: route.url });
    }
  });
}

/**
 * Registers the plugin in a throwaway instance and waits for it to be ready. A plugin that throws
 * (also from a nested register or an onReady hook) or hangs rejects here, where avvio's error cannot
 * reach the real app: once an error enters the real app's boot queue, its ready() fails as a whole.
 */
export async function trialRegister(
  plugin: ExtPluginFunction,
  options: ExtPluginOptions,
  prefix: string,
  timeoutMs: number,
): Promise<void> {
  const trial = Fastify({ logger: false, pluginTimeout: timeoutMs });
  trial.register(
    async (scope) => {
      classifyRoutes(scope);
      await scope.register(plugin, options);
    },
    { prefix },
  );
  const message = `registration did not finish within ${timeoutMs} ms`;
  try {
    await withTimeout(trial.ready(), timeoutMs, message);
  } catch (err) {
    // A hung plugin keeps the trial booting and closing would wait for it: leave that instance to the collector.
    if (isTimeout(err)) throw new LoadTimeoutError(message);
    await closeQuietly(trial, timeoutMs);
    throw err;
  }
  await closeQuietly(trial, timeoutMs);
}

/** Closes the trial; onClose hooks of the plugin run here and must not hold up or fail the host. */
async function closeQuietly(instance: FastifyInstance, timeoutMs: number): Promise<void> {
  await withTimeout(instance.close(), timeoutMs, 'closing the trial instance timed out').catch(() => undefined);
}
