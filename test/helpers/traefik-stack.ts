/**
 * The whole loop for end-to-end tests: loopback backends, a fake Pangolin serving a document that
 * routes to them, a real Stack Manager (in this process, on a real socket, provider token set)
 * discovering it, and a real Traefik polling Stack Manager's provider endpoint.
 */
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { client, type Client } from '../proxy-config/targets-support.ts';
import { writeSources } from '../resources/support.ts';
import { build, tempDir } from './build.ts';
import { WAIT_DEADLINE_MS } from './wait.ts';
import {
  freePort,
  pangolinDocument,
  startBackend,
  startFakePangolin,
  startTraefik,
  type Backend,
  type FakePangolin,
  type Traefik,
  type TraefikOptions,
} from './traefik.ts';

export const PROVIDER_TOKEN = 'e2e-provider-token-0123456789abcdef';

export interface StackManager extends Client {
  app: FastifyInstance;
  base: string;
  dataDir: string;
  /** `http://127.0.0.1:<port>/api/v1/proxy-config` */
  providerUrl: string;
}

/**
 * A Stack Manager on 127.0.0.1 (auth off for the API, `provider.token` enforced on the provider
 * path as in production) whose Pangolin source is `pangolinUrl`; its first sync has run.
 */
export async function startStackManager(
  t: ExecutionContext,
  options: {
    pangolinUrl: string;
    traefikUrl?: string;
    config?: Record<string, unknown>;
    dataDir?: string;
    /** Listen on this port (default: any free one), e.g. one chosen first for `mtls.verify_url`. */
    port?: number;
  },
): Promise<StackManager> {
  const dataDir = options.dataDir ?? path.join(await tempDir(t, 'sm-e2e-'), 'data');
  const traefikUrl = options.traefikUrl ?? 'http://127.0.0.1:9';
  // the discovery poll every 1 s: an upstream change reaches Traefik within a few seconds
  await writeSources(dataDir, { pangolinUrl: options.pangolinUrl, url: traefikUrl } as never, {
    pollIntervalS: 1,
    timeoutMs: 5_000,
  });
  const app = await build(t, {
    dataDir,
    config: {
      auth: { mode: 'off' },
      provider: { token: PROVIDER_TOKEN },
      templates: { seed: false },
      datasources: { pangolin_url: options.pangolinUrl, traefik_url: traefikUrl, active: 'pangolin' },
      ...options.config,
    },
  });
  let report = await app.resources.started();
  const deadline = Date.now() + WAIT_DEADLINE_MS;
  while (!report.ok && Date.now() < deadline) report = await app.resources.syncNow();
  if (!report.ok) throw new Error(`startup sync failed: ${report.error}`);
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, base, dataDir, providerUrl: `${base}/api/v1/proxy-config`, ...client(base) };
}

export interface Stack {
  backends: Backend[];
  pangolin: FakePangolin;
  sm: StackManager;
  traefik: Traefik;
}

/**
 * Backends `a`, `b`, … , one Pangolin resource per entry of `resources` (`<id>-<name>-router` on
 * `<host>` to the named backends), Stack Manager and Traefik; returns once Traefik lists every
 * router of the document.
 */
export async function startStack(
  t: ExecutionContext,
  options: {
    backends?: string[];
    resources?: Array<{ id: number; name: string; host: string; backends: string[]; path?: string }>;
    config?: Record<string, unknown>;
    traefik?: Partial<TraefikOptions>;
    /** Stack Manager's port (default: any free one). */
    port?: number;
    /** Last word on the Pangolin document before anything reads it (TCP routers, TLS options, priorities). */
    editDocument?: (document: Record<string, any>) => void;
    /**
     * Stack Manager's `traefik` data source points at this Traefik's API from its start (the port is
     * chosen first): the instance the live checker (API.md §4.19) and the version gate read.
     */
    traefikSource?: boolean;
  } = {},
): Promise<Stack> {
  const backends = await Promise.all((options.backends ?? ['a']).map((name) => startBackend(t, name)));
  const byName = new Map(backends.map((backend) => [backend.name, backend]));
  const resources = (options.resources ?? [{ id: 1, name: 'app', host: 'app.test', backends: ['a'] }]).map(
    (resource) => ({ ...resource, backends: resource.backends.map((name) => byName.get(name)!) }),
  );
  const document = pangolinDocument(resources);
  options.editDocument?.(document);
  const pangolin = await startFakePangolin(t, document);
  const apiPort = options.traefikSource ? (options.traefik?.ports?.traefik ?? (await freePort())) : undefined;
  const sm = await startStackManager(t, {
    pangolinUrl: pangolin.url,
    config: options.config,
    port: options.port,
    traefikUrl: apiPort ? `http://127.0.0.1:${apiPort}` : undefined,
  });
  const traefik = await startTraefik(t, {
    providerUrl: sm.providerUrl,
    token: PROVIDER_TOKEN,
    ...options.traefik,
    ...(apiPort ? { ports: { ...options.traefik?.ports, traefik: apiPort } } : {}),
  });
  await traefik.waitForRouters(resources.map((resource) => `${resource.id}-${resource.name}-router`));
  return { backends, pangolin, sm, traefik };
}
