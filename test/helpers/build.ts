/** build(t): a fresh app on a temp data dir, closed (and the dir removed) when the test ends. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from '../../core/app.ts';
import { loadConfig } from '../../core/config/load.ts';
import type { AppConfig } from '../../core/config/schema.ts';
import { builtinGroups } from '../../plugins/index.ts';

export interface BuildTestOptions {
  /** Settings merged over the defaults (dotted structure, e.g. {auth: {mode: 'off'}}). */
  config?: Record<string, unknown>;
  dataDir?: string;
  groups?: BuildOptions['groups'];
  now?: () => Date;
  /** Fastify logger options (e.g. `{level: 'info', stream}` to capture log lines); default: no logging. */
  logger?: BuildOptions['logger'];
  /** Capture the production logger's lines (its level comes from config.log.level, e.g. {log: {level: 'info'}}). */
  logStream?: NodeJS.WritableStream;
  /** Cluster membership (default: standalone). */
  cluster?: BuildOptions['cluster'];
  /** The data dir lock's loss signal (default: never lost). */
  dataDirLock?: BuildOptions['dataDirLock'];
}

export async function tempDir(t: ExecutionContext, prefix = 'sm-test-'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Loads the real defaults with test overrides (no environment leaks in). */
export function testConfig(dataDir: string, overrides: Record<string, unknown> = {}): AppConfig {
  // each section of `overrides` is merged into the defaults below key by key: a test passing
  // `storage: { watch: 'poll' }` keeps its temp data_dir (a whole-section replace ran it on ./data)
  const defaults: Record<string, Record<string, unknown>> = {
    log: { level: 'silent' },
    storage: { data_dir: dataDir },
    plugins: { dir: path.join(dataDir, '..', 'no-plugins') },
    // templates off unless a test asks: seeding is 19 fsynced writes per app, and tests build many apps
    templates: { seed: false },
    // history off unless a test asks: a git repository and a commit per app is wasted work in other groups' tests
    history: { enabled: false },
    // docker: a socket that does not exist, so no test ever reaches a system Docker by default
    docker: { host: '', socket: path.join(dataDir, '..', 'no-docker.sock') },
    // backups beside the data dir: never in the checkout's ./backups, where tests would see each other's
    backup: { dir: path.join(dataDir, '..', 'backups') },
  };
  const merged: Record<string, unknown> = { ...overrides };
  for (const [section, values] of Object.entries(defaults)) {
    const given = overrides[section];
    merged[section] = given && typeof given === 'object' && !Array.isArray(given) ? { ...values, ...given } : values;
  }
  return loadConfig({ env: { CONFIG_FILE: path.join(import.meta.dirname, 'empty.yaml') }, overrides: merged });
}

export async function build(t: ExecutionContext, options: BuildTestOptions = {}): Promise<FastifyInstance> {
  const dataDir = options.dataDir ?? path.join(await tempDir(t), 'data');
  const config = testConfig(dataDir, options.config);
  const app = await buildApp({
    config,
    groups: options.groups ?? builtinGroups,
    logger: options.logStream ? undefined : (options.logger ?? false),
    logStream: options.logStream,
    now: options.now,
    cluster: options.cluster,
    dataDirLock: options.dataDirLock,
  });
  t.teardown(() => app.close());
  await app.ready();
  return app;
}
