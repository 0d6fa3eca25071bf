/**
 * The real server for UI tests: the built UI of the current sources (ui-build.ts: built once per
 * source version into a temp dir, never ui/dist), the built-in groups on a temp data dir,
 * listening on 127.0.0.1, fed by the fake Pangolin/Traefik.
 */
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { writeSources } from '../resources/support.ts';
import { ensureUiBuilt } from './ui-build.ts';

export interface UiServer {
  app: FastifyInstance;
  fake: FakeUpstream;
  dataDir: string;
  backupDir: string;
  /** http://127.0.0.1:<port> */
  url: string;
}

export async function startUiServer(t: ExecutionContext, config: Record<string, unknown> = {}): Promise<UiServer> {
  const uiDir = await ensureUiBuilt();
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
      ui: { dir: uiDir },
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
