/** Shared setup of the Plugins group tests: a fake plugin catalogue, an app pointed at a static config. */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import Fastify from 'fastify';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { build, tempDir, type BuildTestOptions } from '../helpers/build.ts';
import { fixture } from '../helpers/shared.ts';

export interface FakeCatalogue {
  url: string;
  state: { fault: null | '500' | 'malformed' | 'object' };
  hits: () => number;
  close(): Promise<void>;
}

/** The real catalogue answer (fixtures/plugin-catalogue.json) on 127.0.0.1, with injectable faults. */
export async function startFakeCatalogue(t: ExecutionContext): Promise<FakeCatalogue> {
  const text = await readFile(fixture('plugin-catalogue.json'), 'utf8');
  const state: FakeCatalogue['state'] = { fault: null };
  let hits = 0;
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.get('/api/services/plugins', async (_request, reply) => {
    hits++;
    if (state.fault === '500') return reply.code(500).send({ message: 'injected' });
    const body = state.fault === 'malformed' ? '[{"id":' : state.fault === 'object' ? '{}' : text;
    return reply.type('application/json').send(body);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
  };
  t.teardown(close);
  return { url: `http://127.0.0.1:${port}/api/services/plugins`, state, hits: () => hits, close };
}

/** A URL nothing listens on (a port opened and closed again). */
export async function deadUrl(): Promise<string> {
  const app = Fastify({ logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  await app.close();
  return `http://127.0.0.1:${port}`;
}

/** Static config like fixtures/README.md (block style, comments), with one local plugin. */
export const STATIC_CONFIG = `# Traefik static configuration
entryPoints:
  web:
    address: ":80"
  websecure:
    address: ":443" # TLS
api:
  insecure: true
experimental:
  # plugins load at startup only
  plugins:
    badger:
      moduleName: github.com/fosrl/badger
      version: v1.2.0
    crowdsec: # the bouncer
      moduleName: github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin
      version: v1.4.4
  localPlugins:
    myplugin:
      moduleName: github.com/me/myplugin
certificatesResolvers:
  letsencrypt:
    acme:
      storage: /letsencrypt/acme.json
`;

export interface PluginsApp {
  app: FastifyInstance;
  dir: string;
  file: string;
}

export interface PluginsAppOptions extends BuildTestOptions {
  /** Initial static config text; undefined leaves the file missing; null leaves the path unset. */
  text?: string | null;
  catalogueUrl?: string;
  traefikUrl?: string;
  ttlS?: number;
}

/** An app (auth off) whose static config is `<tmp>/traefik.yml` and whose catalogue and Traefik are as given. */
export async function pluginsApp(t: ExecutionContext, options: PluginsAppOptions = {}): Promise<PluginsApp> {
  const dir = await tempDir(t, 'sm-plugins-');
  const file = path.join(dir, 'traefik.yml');
  if (typeof options.text === 'string') await writeFile(file, options.text);
  const traefik = options.traefikUrl ?? (await deadUrl());
  const app = await build(t, {
    ...options,
    config: {
      auth: { mode: 'off' },
      datasources: { pangolin_url: `${traefik}/api/v1`, traefik_url: traefik },
      proxy: { static_config_path: options.text === null ? '' : file },
      plugins_catalogue: {
        url: options.catalogueUrl ?? `${await deadUrl()}/api/services/plugins`,
        ttl_s: options.ttlS ?? 3600,
      },
      ...options.config,
    },
  });
  // a busy machine may take seconds to answer: the fake Traefik gets the longest timeout a source allows
  const longer = await app.inject({ method: 'PUT', url: '/api/datasource/traefik', payload: { timeout_ms: 60_000 } });
  if (longer.statusCode >= 300)
    throw new Error(`PUT /api/datasource/traefik answered ${longer.statusCode}: ${longer.body}`);
  return { app, dir, file };
}

/** Parsed JSON body plus status and headers of an injected request. */
export async function call(
  app: FastifyInstance,
  options: InjectOptions,
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const response = await app.inject(options);
  return {
    status: response.statusCode,
    body: response.body ? JSON.parse(response.body) : undefined,
    headers: response.headers,
  };
}

/** Asserts an error reply `{id, message}` with the status and id. */
export function assertError(
  t: ExecutionContext,
  response: { status: number; body: any },
  status: number,
  id: string,
): any {
  t.is(response.status, status, JSON.stringify(response.body));
  t.is(response.body?.id, id);
  t.is(typeof response.body?.message, 'string');
  return response.body;
}

/** Creates a plugin middleware using `key`. */
export async function pluginMiddleware(
  t: ExecutionContext,
  app: FastifyInstance,
  name: string,
  key: string,
): Promise<string> {
  const r = await call(app, {
    method: 'POST',
    url: '/api/middlewares',
    payload: { name, type: 'plugin', config: { [key]: { enabled: 'true' } } },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  return r.body.id as string;
}
