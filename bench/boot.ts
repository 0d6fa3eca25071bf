/**
 * Startup cost at scale: N Pangolin routers, N middlewares and N resource files, then one app boot
 * (file scans, first discovery sync, first generation). Prints the phases' times.
 *   npx tsx bench/boot.ts [--resources 5000]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { buildApp } from '../core/app.ts';
import { loadConfig, PROJECT_ROOT } from '../core/config/load.ts';
import { builtinGroups } from '../plugins/index.ts';
import { pangolinBody, middlewareYaml, resourceYaml } from './stack.ts';

const i = process.argv.indexOf('--resources');
const N = i > 0 ? Number(process.argv[i + 1]) : 5000;
const work = await mkdtemp(path.join(tmpdir(), 'sm-boot-'));
const dataDir = path.join(work, 'data');
try {
  const body = pangolinBody(N);
  const pangolin = Fastify();
  pangolin.get('/api/v1/traefik-config', async (_req, reply) => reply.type('application/json').send(body));
  await pangolin.listen({ host: '127.0.0.1', port: 0 });
  const pangolinUrl = `http://127.0.0.1:${(pangolin.server.address() as { port: number }).port}/api/v1`;
  await mkdir(path.join(dataDir, 'middlewares'), { recursive: true });
  await mkdir(path.join(dataDir, 'resources'), { recursive: true });
  for (let n = 1; n <= N; n++) {
    await writeFile(path.join(dataDir, 'middlewares', `rl-${n}.yaml`), middlewareYaml(n, 100));
    await writeFile(path.join(dataDir, 'resources', `${n}-app-${n}-router.yaml`), resourceYaml(n));
  }
  const config = loadConfig({
    env: { CONFIG_FILE: path.join(PROJECT_ROOT, 'test', 'helpers', 'empty.yaml') },
    overrides: { log: { level: 'warn' }, storage: { data_dir: dataDir }, auth: { mode: 'off' }, templates: { seed: false }, audit: { enabled: false },
      datasources: { pangolin_url: pangolinUrl, traefik_url: 'http://127.0.0.1:9', active: 'pangolin' } },
  });
  const t0 = performance.now();
  const app = await buildApp({ config, groups: builtinGroups, logger: false });
  await app.ready();
  const t1 = performance.now();
  const report = await app.resources.started();
  const t2 = performance.now();
  await app.proxyConfig.regenerate();
  const t3 = performance.now();
  process.stdout.write(`${N} resources: build+ready ${(t1 - t0).toFixed(0)} ms, first sync ${(t2 - t1).toFixed(0)} ms (written ${JSON.stringify(report).slice(0, 120)}), generation ${(t3 - t2).toFixed(0)} ms\n`);
  await app.close();
  await pangolin.close();
} finally {
  await rm(work, { recursive: true, force: true });
}
