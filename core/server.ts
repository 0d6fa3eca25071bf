/** Listens on HOST:PORT, reloads on PLUGINS_DIR changes and shuts down gracefully on SIGTERM/SIGINT. */
import type { AddressInfo } from 'node:net';
import closeWithGrace from 'close-with-grace';
import pino, { type Logger } from 'pino';
import { ConfigError, loadConfig } from './config/load.ts';
import type { AppConfig } from './config/schema.ts';
import { AppHost } from './app-host.ts';
import { DataDirLockSignal, lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { standalone, type Cluster } from './cluster/standalone.ts';
import { ensureWritableDir, isPermissionError, StartupError, whoAmI } from './startup-checks.ts';
import { readConfigSnapshot } from './config-snapshot.ts';
import { earlyHandler } from './early-server.ts';
import { pinTickObjectShape } from './tick-shape.ts';
import type { BuiltinGroup } from './types.ts';

// Fastify, the store, the cluster client (etcd3, gRPC: only in cluster mode) and the plugin loader are imported once the
// socket listens (issue 11): until the app is built the early handler serves the last run's provider
// config, and every module loaded before listening delays that first answer.
const appModule = () => import('./app.ts');
const clusterModule = () => import('./cluster/index.ts');

/** Grace period for in-flight requests at shutdown. */
const SHUTDOWN_GRACE_MS = 10_000;
/**
 * A repeat of the stopping signal this soon after it is the same stop, not a request to force it:
 * Ctrl-C on `npm start` reaches npm and the server (one process group) and npm forwards it, so the
 * server gets SIGINT twice within milliseconds. A later repeat (or another signal) exits at once.
 */
const REPEAT_SIGNAL_WINDOW_MS = 1000;

/** Setup problems end the process with their exit code and one line on stderr, never a stack trace. */
function exitOnSetupError(err: unknown): never | void {
  if (err instanceof ConfigError || err instanceof StartupError) {
    process.stderr.write(`stack-manager: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  // a file deep inside the data dir that this user may not write (a partial chown)
  if (isPermissionError(err) && err.path) {
    process.stderr.write(
      `stack-manager: ${err.path} is not writable by ${whoAmI()}: ${err.code}; check the ownership of storage.data_dir (DATA_DIR) and backup.dir (BACKUP_DIR)\n`,
    );
    process.exit(78);
  }
}

/** Checks the data and backup dirs and takes the data dir's lock. */
async function prepareDirs(config: AppConfig, logger: Logger, signal: DataDirLockSignal): Promise<DataDirLock> {
  ensureWritableDir({ key: 'storage.data_dir', env: 'DATA_DIR', dir: config.storage.data_dir });
  // archives hold the data dir's secrets: the dir is private, as the backup group creates it (API.md §4.10)
  ensureWritableDir({ key: 'backup.dir', env: 'BACKUP_DIR', dir: config.backup.dir, mode: 0o700 });
  return lockDataDir(config.storage.data_dir, {
    onLost: (err) => {
      logger.error(
        { err: { message: err.message } },
        'the data dir lock was lost (removed or not refreshed): another process may take it',
      );
      signal.lost(err);
    },
  });
}

/**
 * Loads the config, builds the app with the given groups and serves it until a signal arrives. The
 * groups may come from a loader: it runs after the server listens (main.ts imports them lazily).
 */
export async function runServer(groupsOrLoader: BuiltinGroup[] | (() => Promise<BuiltinGroup[]>)): Promise<AppHost> {
  // before the first full GC can free the tick objects' maps: otherwise every nextTick may go through
  // the V8 runtime for the rest of the process (≈ 4 µs per provider request; see tick-shape.ts)
  await pinTickObjectShape();
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (err) {
    exitOnSetupError(err);
    throw err;
  }
  // one synchronous stdout for the process and every app instance: lines keep their order (the
  // default async destinations could write "ready" after "stopped", and two of them on fd 1 could
  // interleave), and nothing is lost when the process exits; the volume is small (no line per
  // request at info)
  const destination = pino.destination({ dest: 1, sync: true });
  const logger = pino({ level: config.log.level }, destination);
  let lock: DataDirLock | null = null;
  // outlives hot reloads like the lock: every instance built hears its loss
  const lockSignal = new DataDirLockSignal();
  try {
    lock = await prepareDirs(config, logger, lockSignal);
  } catch (err) {
    exitOnSetupError(err);
    throw err;
  }
  // listen first: while the first instance is built (store scan, first sync: seconds at 10k
  // resources) the last run's provider config is served from data/.cache (issue 11)
  const snapshot = await readConfigSnapshot(config.storage.data_dir);
  let groups: BuiltinGroup[] | null = Array.isArray(groupsOrLoader) ? groupsOrLoader : null;
  const loadGroups = async () => (groups ??= await (groupsOrLoader as () => Promise<BuiltinGroup[]>)());
  // the election lives as long as the process: hot reloads build new instances on the same membership
  let cluster: Cluster | null = null;
  const host = new AppHost(
    async (generation, serverFactory) => {
      const { buildApp } = await appModule();
      cluster ??=
        config.cluster.etcd_endpoints.length === 0
          ? standalone(config.cluster.node_name || undefined)
          : (await clusterModule()).joinCluster(config.cluster, logger, config.storage.data_dir);
      return buildApp({
        config,
        groups: await loadGroups(),
        generation,
        serverFactory,
        cluster,
        dataDirLock: lockSignal,
        logStream: destination,
      });
    },
    logger,
    earlyHandler(snapshot, config.provider.token),
    { requestTimeout: config.server.request_timeout_ms },
  );
  await new Promise<void>((resolve, reject) => {
    host.server.once('error', reject);
    host.server.listen(config.server.port, config.server.host, () => resolve());
  }).catch(async (err) => {
    await lock?.release();
    process.stderr.write(
      `stack-manager: cannot listen on ${config.server.host}:${config.server.port} (server.host/HOST, server.port/PORT): ${(err as Error).message}\n`,
    );
    process.exit(78);
  });
  const address = host.server.address() as AddressInfo;
  logger.info(
    {
      host: config.server.host,
      port: address.port,
      pid: process.pid,
      data_dir: config.storage.data_dir,
      snapshot: snapshot?.etag ?? null,
    },
    'Stack Manager listening, starting',
  );
  // signals are handled from the moment we listen: a SIGTERM while the app is still being built
  // waits for the build, then closes it cleanly (exit 0 and the last log line, as after startup)
  let watcher: { close(): Promise<void> } | null = null;
  const starting = host.start().then(async (app) => {
    (await import('./startup-summary.ts')).logAccessSummary(app, logger);
    const { watchPluginsDir } = await import('./plugin-loader/watch.ts');
    watcher = await watchPluginsDir({ dir: config.plugins.dir, logger, onChange: () => void host.reload() });
  });
  // no delay of close-with-grace's own: its timer would also run while the build is awaited, and a
  // build slowed by a busy machine is not a hung shutdown. The grace period starts once it is built.
  // SIGINT and SIGTERM are handled below (a repeated Ctrl-C); close-with-grace handles the rest
  let stopping: { signal: NodeJS.Signals; at: number } | null = null;
  const graceful = closeWithGrace({ delay: null, skip: ['SIGINT', 'SIGTERM'] }, async ({ err, ...out }) => {
    const signal = out.signal ?? stopping?.signal;
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await starting.catch(() => undefined);
    const grace = setTimeout(() => {
      logger.error({ grace_ms: SHUTDOWN_GRACE_MS }, 'shutdown did not finish within the grace period: exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    grace.unref();
    await watcher?.close();
    await host.close();
    await cluster?.close();
    await lock?.release();
    clearTimeout(grace);
    // the last line: an orchestrator reading the log knows the stop was clean (exit code 0 follows)
    logger.info({ signal: signal ?? null }, 'Stack Manager stopped');
  });
  const onStopSignal = (signal: NodeJS.Signals): void => {
    if (stopping === null) {
      stopping = { signal, at: Date.now() };
      void graceful.close();
    } else if (signal !== stopping.signal || Date.now() - stopping.at >= REPEAT_SIGNAL_WINDOW_MS) {
      logger.error({ signal }, `second ${signal}, exiting`);
      process.exit(1);
    }
  };
  process.on('SIGINT', onStopSignal);
  process.on('SIGTERM', onStopSignal);
  try {
    await starting;
  } catch (err) {
    host.server.close();
    await lock?.release();
    exitOnSetupError(err);
    throw err;
  }
  logger.info({ generation: host.generation }, 'Stack Manager ready');
  return host;
}
