/** The synthetic stack the benchmarks share: N Pangolin resources, one middleware assigned to each. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { stringify } from 'yaml';
import { loadConfig, PROJECT_ROOT } from '../core/config/load.ts';
import type { AppConfig } from '../core/config/schema.ts';

/** A Pangolin HTTP-provider body with N HTTP resources (router + redirect + service each). */
export function pangolinBody(n: number): string {
  const routers: Record<string, unknown> = {};
  const services: Record<string, unknown> = {};
  for (let i = 1; i <= n; i++) {
    const host = `app${i}.example.com`;
    routers[`${i}-App-${i}-router`] = {
      entryPoints: ['websecure'],
      middlewares: ['badger'],
      priority: 100,
      rule: `Host(\`${host}\`)`,
      service: `${i}-App-${i}-service`,
      tls: { certResolver: 'letsencrypt' },
    };
    routers[`${i}-App-${i}-router-redirect`] = {
      entryPoints: ['web'],
      middlewares: ['redirect-to-https'],
      rule: `Host(\`${host}\`)`,
      service: `${i}-App-${i}-service`,
    };
    services[`${i}-App-${i}-service`] = {
      loadBalancer: { servers: [{ url: `http://100.89.128.${4 * (i % 60) + 4}:${40000 + (i % 25000)}` }] },
    };
  }
  return JSON.stringify({
    http: {
      middlewares: {
        badger: {
          plugin: { badger: { apiBaseUrl: 'http://pangolin:3001/api/v1', userSessionCookieName: 'p_session_token' } },
        },
        'redirect-to-https': { redirectScheme: { scheme: 'https' } },
      },
      routers,
      services,
    },
  });
}

export const middlewareYaml = (i: number, average: number): string =>
  stringify({ name: `Rate limit ${i}`, type: 'rateLimit', config: { average, burst: 50 } });

/** resources/<id>.yaml as a GitOps user writes it: the router it belongs to and one assignment. */
export const resourceYaml = (i: number): string =>
  stringify({
    name: `${i}-App-${i}-router`,
    router: `${i}-App-${i}-router@http`,
    source: 'pangolin',
    status: 'active',
    rule: `Host(\`app${i}.example.com\`)`,
    middlewares: [{ id: `rl-${i}`, priority: 100 }],
  });

export interface Stack {
  dataDir: string;
  /** The fake Pangolin's API base URL. */
  pangolinUrl: string;
  config: AppConfig;
  close(): Promise<void>;
}

/**
 * A temp data dir holding N middlewares and N resources (one assignment each, written as a GitOps
 * user would), a fake Pangolin on 127.0.0.1 serving N routers, and settings pointing at it.
 */
export async function createStack(n: number): Promise<Stack> {
  const work = await mkdtemp(path.join(tmpdir(), 'sm-bench-'));
  const dataDir = path.join(work, 'data');
  const body = pangolinBody(n);
  const pangolin = Fastify();
  pangolin.get('/api/v1/traefik-config', async (_req, reply) => reply.type('application/json').send(body));
  await pangolin.listen({ host: '127.0.0.1', port: 0 });
  const pangolinUrl = `http://127.0.0.1:${(pangolin.server.address() as AddressInfo).port}/api/v1`;
  await mkdir(path.join(dataDir, 'middlewares'), { recursive: true });
  await mkdir(path.join(dataDir, 'resources'), { recursive: true });
  for (let i = 1; i <= n; i++) {
    await writeFile(path.join(dataDir, 'middlewares', `rl-${i}.yaml`), middlewareYaml(i, 100));
    await writeFile(path.join(dataDir, 'resources', `${i}-app-${i}-router.yaml`), resourceYaml(i));
  }
  const config = loadConfig({
    env: { CONFIG_FILE: path.join(PROJECT_ROOT, 'test', 'helpers', 'empty.yaml') },
    overrides: {
      log: { level: 'warn' },
      storage: { data_dir: dataDir },
      auth: { mode: 'off' },
      templates: { seed: false },
      audit: { enabled: false },
      server: { host: '127.0.0.1', port: 0 },
      datasources: { pangolin_url: pangolinUrl, traefik_url: 'http://127.0.0.1:9', active: 'pangolin' },
    },
  });
  return {
    dataDir,
    pangolinUrl,
    config,
    close: async () => {
      await pangolin.close();
      await rm(work, { recursive: true, force: true });
    },
  };
}
