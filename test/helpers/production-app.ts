/**
 * The image's runtime layout, built the way the Dockerfile builds it: package.json and the lock,
 * `npm ci --omit=dev --ignore-scripts` (production dependencies only: no tsx, no TypeScript),
 * config/, and dist/ compiled by `tsc -p tsconfig.build.json`. Tests start `node dist/plugins/main.js`
 * from it as separate processes, so they see exit codes, signals and stderr as an operator would.
 */
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestFn } from 'ava';
import { execForm, parseDockerfile } from './dockerfile.ts';
import { waitFor } from './wait.ts';

const run = promisify(execFile);

/** The repository root (this file is test/helpers/production-app.ts). */
export const REPO = path.resolve(import.meta.dirname, '..', '..');
/** Building and installing on a busy 2-core machine: minutes, not seconds. */
export const BUILD_TIMEOUT_MS = 600_000;

/** What useProductionApp puts in a test file's context. */
export interface ProductionAppContext {
  app: string;
  remove: () => Promise<void>;
}

/**
 * Builds the runtime layout once before a file's tests (t.context.app) and removes it after them;
 * `enabled` false (e.g. no Traefik binary for a file that skips) builds nothing.
 */
export function useProductionApp<C extends ProductionAppContext>(test: TestFn<C>, enabled = true): void {
  test.before(async (t) => {
    if (!enabled) return;
    const built = await buildProductionApp();
    t.context.app = built.dir;
    t.context.remove = built.remove;
  });
  test.after.always(async (t) => {
    await t.context.remove?.();
  });
}

/** Builds the runtime layout in a fresh temp dir (world-readable, so tests can run it as nobody). */
export async function buildProductionApp(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sm-prod-'));
  await chmod(dir, 0o755);
  await Promise.all(
    ['package.json', 'package-lock.json'].map((file) => cp(path.join(REPO, file), path.join(dir, file))),
  );
  await cp(path.join(REPO, 'config'), path.join(dir, 'config'), { recursive: true });
  // --noCheck: emit only; test/typecheck.test.ts type-checks the same sources
  const tsc = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  await Promise.all([
    // the Dockerfile's runtime step; --prefer-offline: the packages are in the cache after the repo's own `npm ci`
    run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: dir,
      timeout: BUILD_TIMEOUT_MS,
    }),
    run(
      process.execPath,
      [tsc, '-p', path.join(REPO, 'tsconfig.build.json'), '--outDir', path.join(dir, 'dist'), '--noCheck'],
      { cwd: REPO, timeout: BUILD_TIMEOUT_MS },
    ),
  ]);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface ServerProcess {
  child: ChildProcess;
  /** stdout split into lines, parsed as JSON where they are (pino), else kept as text. */
  lines: Array<Record<string, unknown>>;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits for a log line with this `msg` (prefix) and returns it. */
  line: (msg: string, timeoutMs?: number) => Promise<Record<string, unknown>>;
}

/** Base environment for a server in a test: loopback, no real upstreams, no system Docker. */
export function serverEnv(work: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    CONFIG_FILE: path.join(REPO, 'test', 'helpers', 'empty.yaml'),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: path.join(work, 'data'),
    BACKUP_DIR: path.join(work, 'backups'),
    PLUGINS_DIR: path.join(work, 'no-plugins'),
    DOCKER_SOCKET: path.join(work, 'no-docker.sock'),
    // a closed port: the discovery sync fails at once instead of waiting on DNS
    PANGOLIN_URL: 'http://127.0.0.1:9/api/v1',
    TRAEFIK_API_URL: 'http://127.0.0.1:9',
    ...extra,
  };
}

/** Starts `command args` (default: node dist/plugins/main.js) in `dir` and collects its output. */
export function startServer(
  dir: string,
  env: Record<string, string>,
  options: SpawnOptions & { command?: string; args?: string[] } = {},
): ServerProcess {
  // default: the image's CMD (Dockerfile)
  const {
    command = process.execPath,
    args = ['--max-semi-space-size=8', 'dist/plugins/main.js'],
    ...spawnOptions
  } = options;
  const child = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], ...spawnOptions });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts.filter(Boolean)) {
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ text });
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // 'close', not 'exit': 'exit' may come before the last stdout chunk is read, and tests check the
  // last log line once the process is gone (CI saw "ready" as the last line, "stopped" still unread)
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const line = (msg: string, timeoutMs = 120_000) =>
    waitFor(
      () => {
        const found = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith(msg));
        if (!found && child.exitCode !== null)
          throw new Error(`server exited (${child.exitCode}) before logging "${msg}": ${stderr}`);
        return found;
      },
      timeoutMs,
      25,
    );
  return { child, lines, stderr: () => stderr, exit, line };
}

/** A third-party plugin that holds the app's build until `release` exists (the restart window, stretched). */
export async function holdPlugin(work: string): Promise<{ dir: string; release: string }> {
  const dir = path.join(work, 'plugins');
  await mkdir(path.join(dir, 'hold'), { recursive: true });
  await writeFile(
    path.join(dir, 'hold', 'plugin.yaml'),
    'name: hold\nversion: 1.0.0\napi_version: ^1.0.0\nentry: index.mjs\n',
  );
  const release = path.join(work, 'release');
  await writeFile(
    path.join(dir, 'hold', 'index.mjs'),
    `import { existsSync } from 'node:fs';
export default async function hold() {
  while (!existsSync(${JSON.stringify(release)})) await new Promise((resolve) => setTimeout(resolve, 20));
}
`,
  );
  return { dir, release };
}

/** Runs the Dockerfile's HEALTHCHECK command against a port, as Docker does; resolves with its exit code. */
export async function imageHealthcheck(port: number): Promise<number> {
  const instruction = parseDockerfile(path.join(REPO, 'Dockerfile'))
    .stages.at(-1)!
    .instructions.find((i) => i.keyword === 'HEALTHCHECK')!;
  const [command, ...args] = execForm(instruction.args.slice(instruction.args.indexOf('CMD ') + 4))!;
  if (command !== 'node') throw new Error('the HEALTHCHECK command is not a node command');
  return run(process.execPath, args, { env: { PORT: String(port) }, timeout: 60_000 }).then(
    () => 0,
    (err: { code?: unknown }) => (typeof err.code === 'number' ? err.code : -1),
  );
}
