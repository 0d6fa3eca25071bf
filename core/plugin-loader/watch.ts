/**
 * Watches PLUGINS_DIR for hot reload (API.md §6): changes are collected for a quiet second, then
 * reported once. Rebuilding the app and handing over the socket is the server's job (core/server.ts).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { watch } from 'chokidar';
import type { FastifyBaseLogger } from 'fastify';

export interface PluginsWatchOptions {
  dir: string;
  logger: FastifyBaseLogger;
  /** Called once per burst of changes with the changed paths (absolute). */
  onChange: (paths: string[]) => void;
  /** Quiet time before a burst is reported (API.md §6: 1 s). */
  debounceMs?: number;
}

/** A running watcher; close it in the owner's onClose. */
export interface PluginsWatcher {
  close(): Promise<void>;
}

/** Starts watching; resolves once the initial scan is done. A missing PLUGINS_DIR is not watched (logged). */
export async function watchPluginsDir(options: PluginsWatchOptions): Promise<PluginsWatcher> {
  const dir = path.resolve(options.dir);
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) {
    options.logger.info({ dir }, 'plugins dir does not exist; hot reload is off until the server restarts');
    return { close: async () => undefined };
  }
  const changed = new Set<string>();
  const newDirs = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const skipped = (file: string) =>
    path
      .relative(dir, file)
      .split(path.sep)
      .some((part) => part.startsWith('.') || part === 'node_modules');
  const flush = async () => {
    timer = undefined;
    // chokidar lists a new dir before attaching to it: files written into it at once (a plugin
    // copied in, `mkdir x && cp ...`) can go unreported and unwatched. Every file of a new dir is
    // part of the burst, and the dir is added to the watcher explicitly.
    for (const added of newDirs) {
      const files = await readdir(added, { recursive: true, withFileTypes: true }).catch(() => []);
      for (const entry of files) {
        const file = path.join(entry.parentPath, entry.name);
        if (entry.isFile() && !skipped(file)) changed.add(file);
      }
      watcher.add(added);
    }
    newDirs.clear();
    const paths = [...changed].sort();
    changed.clear();
    options.logger.info({ dir, paths }, 'plugins dir changed; reloading plugins');
    try {
      options.onChange(paths);
    } catch (err) {
      options.logger.error({ err }, 'plugin reload handler failed');
    }
  };
  // Dot-files and node_modules churn during installs and editor saves without changing what loads.
  const watcher = watch(dir, { ignoreInitial: true, ignored: skipped });
  watcher.on('all', (event, file) => {
    if (event === 'addDir') newDirs.add(path.resolve(file));
    changed.add(path.resolve(file));
    clearTimeout(timer);
    timer = setTimeout(() => void flush(), options.debounceMs ?? 1000);
  });
  watcher.on('error', (err) => options.logger.error({ err, dir }, 'plugins dir watcher error'));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}
