/**
 * A private real CrowdSec LAPI (TESTING.md) for the tests that talk to CrowdSec: start/stop through
 * the shared fixture scripts, cscli seeding, the app settings pointing at it, and useLapi(test) for a
 * file whose tests all need one LAPI (skipped with a warning where crowdsec is not installed).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestFn } from 'ava';
import { freePort } from './ports.ts';
import { fixture } from './shared.ts';

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
  // a port outside the ephemeral range (ports.ts): the script's own pick (listen 0) can be taken before crowdsec binds it
  const { stdout } = await run(fixture('crowdsec', 'start-lapi.sh'), [String(await freePort()), dir]);
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

/**
 * One LAPI for the whole file in `t.context.lapi`, started before its tests (then `seed`, e.g. cscli
 * decisions) and stopped after them. Returns the serial test function to declare the LAPI tests with:
 * skipped, with a warning naming `what`, when crowdsec or cscli is not installed.
 */
export function useLapi(test: TestFn<{ lapi?: Lapi }>, what: string, seed?: (lapi: Lapi) => Promise<void>) {
  const ok = hasCommands('crowdsec', 'cscli');
  if (!ok) console.warn(`SKIP ${what}: crowdsec/cscli not installed (apt-get install crowdsec)`);
  test.before(async (t) => {
    if (!ok) return;
    t.context.lapi = await startLapi();
    await seed?.(t.context.lapi);
  });
  test.after.always(async (t) => {
    await t.context.lapi?.stop();
  });
  return ok ? test.serial : test.serial.skip;
}
