/** Shared setup of the IP tests: a private real CrowdSec LAPI (TESTING.md), cscli seeding, closed ports. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fixture } from '../helpers/shared.ts';

const run = promisify(execFile);

export interface Lapi {
  env: Record<string, string>;
  stop: () => Promise<void>;
}

/** Whether every command is on PATH. */
export function hasCommands(...names: string[]): boolean {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  return names.every((name) => dirs.some((dir) => existsSync(path.join(dir, name))));
}

const parseEnv = (s: string) =>
  Object.fromEntries(
    s
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

/** Starts a private LAPI on a free 127.0.0.1 port in a temp dir; `stop` ends it by its pid file and removes the dir. */
export async function startLapi(): Promise<Lapi> {
  const dir = await mkdtemp(path.join(tmpdir(), 'lapi-'));
  const { stdout } = await run(fixture('crowdsec', 'start-lapi.sh'), ['0', dir]);
  return {
    env: parseEnv(stdout),
    stop: async () => {
      await run(fixture('crowdsec', 'stop-lapi.sh'), [dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs the real cscli against the LAPI's config (seeding decisions and their alerts). */
export async function cscli(lapi: Lapi, ...args: string[]): Promise<string> {
  const { stdout } = await run('cscli', ['-c', lapi.env.CROWDSEC_CONFIG, '--error', ...args]);
  return stdout;
}

/** App settings pointing at the LAPI with every credential; `overrides` replace single crowdsec keys. */
export function crowdsecConfig(lapi: Lapi, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: { mode: 'off' },
    crowdsec: {
      url: lapi.env.CROWDSEC_URL,
      bouncer_key: lapi.env.CROWDSEC_BOUNCER_KEY,
      machine_id: lapi.env.CROWDSEC_MACHINE_ID,
      machine_password: lapi.env.CROWDSEC_MACHINE_PASSWORD,
      timeout_ms: 5000,
      alerts_limit: 50,
      ...overrides,
    },
  };
}

/** A 127.0.0.1 port nothing listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
