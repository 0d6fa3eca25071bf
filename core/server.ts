/** Listens on HOST:PORT, reloads on PLUGINS_DIR changes and shuts down gracefully on SIGTERM/SIGINT. */
import closeWithGrace from 'close-with-grace';
import pino from 'pino';
import { ConfigError, loadConfig } from './config/load.ts';
import { buildApp } from './app.ts';
import { AppHost } from './app-host.ts';
import { readConfigSnapshot } from './config-snapshot.ts';
import { earlyHandler } from './early-server.ts';
import { watchPluginsDir } from './plugin-loader/index.ts';
import type { BuiltinGroup } from './types.ts';

/** Grace period for in-flight requests at shutdown. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Loads the config, builds the app with the given groups and serves it until a signal arrives. The
 * groups may come from a loader: it runs after the server listens (main.ts imports them lazily).
 */
export async function runServer(groupsOrLoader: BuiltinGroup[] | (() => Promise<BuiltinGroup[]>)): Promise<AppHost> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`stack-manager: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    throw err;
  }
  const logger = pino({ level: config.log.level });
  // listen first: while the first instance is built (store scan, first sync: seconds at 10k
  // resources) the last run's provider config is served from data/.cache (issue 11)
  const snapshot = await readConfigSnapshot(config.storage.data_dir);
  let groups: BuiltinGroup[] | null = Array.isArray(groupsOrLoader) ? groupsOrLoader : null;
  const loadGroups = async () => (groups ??= await (groupsOrLoader as () => Promise<BuiltinGroup[]>)());
  const host = new AppHost(async (generation, serverFactory) => buildApp({ config, groups: await loadGroups(), generation, serverFactory }), logger,
    earlyHandler(snapshot, config.provider.token));
  await new Promise<void>((resolve, reject) => {
    host.server.once('error', reject);
    host.server.listen(config.server.port, config.server.host, () => resolve());
  });
  logger.info({ host: config.server.host, port: config.server.port, snapshot: snapshot?.etag ?? null }, 'Stack Manager listening, starting');
  try {
    await host.start();
  } catch (err) {
    host.server.close();
    throw err;
  }
  const watcher = await watchPluginsDir({ dir: config.plugins.dir, logger, onChange: () => void host.reload() });
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await watcher.close();
    await host.close();
  });
  logger.info({ generation: host.generation }, 'Stack Manager ready');
  return host;
}
