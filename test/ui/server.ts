/**
 * The real server for UI tests: the built UI (rebuilt when ui/ changed since the last build), the
 * built-in groups on a temp data dir, listening on 127.0.0.1, fed by the fake Pangolin/Traefik.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { writeSources } from '../resources/support.ts';

const ROOT = path.join(import.meta.dirname, '..', '..');
const UI = path.join(ROOT, 'ui');
const INDEX = path.join(UI, 'dist', 'index.html');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

let building: Promise<void> | null = null;
/** Runs `vite build` when ui/dist is missing or older than a UI source file (tests must test this code). */
export function ensureUiBuilt(): Promise<void> {
  building ??= (async () => {
    if (existsSync(INDEX) && statSync(INDEX).mtimeMs >= newestSource(UI)) return;
    const vite = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
    await promisify(execFile)(
      process.execPath,
      [vite, 'build', '--config', path.join(UI, 'vite.config.ts'), '--logLevel', 'error'],
      { cwd: ROOT },
    );
  })();
  return building;
}

export interface UiServer {
  app: FastifyInstance;
  fake: FakeUpstream;
  dataDir: string;
  backupDir: string;
  /** http://127.0.0.1:<port> */
  url: string;
}

export async function startUiServer(t: ExecutionContext, config: Record<string, unknown> = {}): Promise<UiServer> {
  await ensureUiBuilt();
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const root = await tempDir(t, 'sm-ui-');
  const dataDir = path.join(root, 'data');
  const backupDir = path.join(root, 'backups');
  await writeSources(dataDir, fake, { pollIntervalS: 3600 });
  // a Traefik static config, so the plugins screen has a file to list and edit
  const staticConfig = path.join(root, 'traefik.yml');
  await writeFile(staticConfig, 'entryPoints:\n  web:\n    address: ":80"\n');
  const app = await build(t, {
    dataDir,
    config: {
      auth: { mode: 'off' },
      backup: { dir: backupDir },
      proxy: { static_config_path: staticConfig },
      datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' },
      ...config,
    },
  });
  let report = await app.resources.started();
  if (!report.ok) report = await app.resources.syncNow();
  if (!report.ok) throw new Error(`startup sync failed: ${report.error}`);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { app, fake, dataDir, backupDir, url: `http://127.0.0.1:${port}` };
}
