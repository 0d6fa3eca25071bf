/** Starts Stack Manager (`npm start`'s entry point, one node process) pinned to the server core. */
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { stringify } from 'yaml';
import { PROJECT_ROOT } from '../../core/config/load.ts';
import { spawnPinned, waitFor } from './measure.ts';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ServerSettings {
  dataDir: string;
  pangolinUrl: string;
  accessLog?: string;
  backupDir?: string;
  /**
   * `dist`: exactly what `npm start` runs (compiled JavaScript, buildServer() first); default `tsx`:
   * the TypeScript sources through tsx, whose transpiling adds seconds at startup but nothing later.
   */
  entry?: 'tsx' | 'dist';
  /** Node options before the entry, replacing the entry's own (`dist`: `--max-semi-space-size=8`). */
  nodeOptions?: string[];
}

export interface RunningServer {
  pid: number;
  base: string;
  startedAt: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Writes a config file next to the data dir and starts the server; resolves once the port answers. */
export async function startServer(settings: ServerSettings): Promise<RunningServer> {
  const port = await freePort();
  const configFile = path.join(path.dirname(settings.dataDir), 'bench-config.yaml');
  writeFileSync(
    configFile,
    stringify({
      server: { host: '127.0.0.1', port },
      log: { level: 'warn' },
      storage: { data_dir: settings.dataDir },
      backup: { dir: settings.backupDir ?? path.join(path.dirname(settings.dataDir), 'backups') },
      auth: { mode: 'off' },
      templates: { seed: false },
      datasources: { pangolin_url: settings.pangolinUrl, traefik_url: 'http://127.0.0.1:9', active: 'pangolin' },
      logs: { proxy_access_log: settings.accessLog ?? '', max_scan_bytes: 4 * 1024 ** 3 },
      docker: { socket: path.join(path.dirname(settings.dataDir), 'no-docker.sock') },
    }),
  );
  const startedAt = performance.now();
  const args =
    settings.entry === 'dist'
      ? // package.json's "start" script
        [
          ...(settings.nodeOptions ?? ['--max-semi-space-size=8']),
          path.join(PROJECT_ROOT, 'dist', 'plugins', 'main.js'),
        ]
      : [...(settings.nodeOptions ?? []), '--import', 'tsx', path.join(PROJECT_ROOT, 'plugins', 'main.ts')];
  const child = spawnPinned(process.execPath, args, {
    env: { ...process.env, CONFIG_FILE: configFile },
    cwd: PROJECT_ROOT,
    // the server's own log (warn and up), next to the data dir; the path is printed on failures
    logFile: path.join(path.dirname(settings.dataDir), 'server.log'),
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  return {
    // taskset execs node: same pid
    pid: child.pid!,
    base,
    startedAt,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

let built: Promise<unknown> | null = null;

/** Compiles the server into dist/ (`npm run build:server`), once per benchmark run, so `entry: 'dist'` runs the current sources. */
export async function buildServer(): Promise<void> {
  built ??= promisify(execFile)(
    process.execPath,
    [path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: PROJECT_ROOT,
    },
  );
  await built;
}

/** Resolves once `url` answers with a status other than a connection failure. */
export async function waitListening(url: string, timeoutMs = 120_000): Promise<void> {
  await waitFor(async () => (await fetch(url)).status, timeoutMs, `${url} to answer`);
}
