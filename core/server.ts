/** Listens on HOST:PORT and shuts down gracefully on SIGTERM/SIGINT; nothing else. */
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig } from './config/load.ts';
import { buildApp } from './app.ts';
import type { BuiltinGroup } from './types.ts';

/** Grace period for in-flight requests at shutdown. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Loads the config, builds the app with the given groups and serves it until a signal arrives. */
export async function runServer(groups: BuiltinGroup[]): Promise<FastifyInstance | undefined> {
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
  const app = await buildApp({ config, groups });
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close();
  });
  await app.listen({ port: config.server.port, host: config.server.host });
  return app;
}
