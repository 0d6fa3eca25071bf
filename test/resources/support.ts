/** Helpers of the resources tests: an app pointed at a fake upstream, requests, file snapshots. */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import { stringify } from 'yaml';
import { build, tempDir } from '../helpers/build.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { WAIT_DEADLINE_MS } from '../helpers/wait.ts';

export interface SourceOptions {
  active?: 'pangolin' | 'traefik';
  /** Traefik API URL (default: the fake's). */
  traefikUrl?: string;
  timeoutMs?: number;
  pollIntervalS?: number;
}

export interface Harness {
  app: FastifyInstance;
  fake: FakeUpstream;
  dataDir: string;
}

/** datasources.yaml (API.md §3.1, §4.5) written before the app starts, so the timeout and poll interval suit the test. */
export async function writeSources(dataDir: string, fake: FakeUpstream, options: SourceOptions = {}): Promise<void> {
  const at = '2026-01-01T00:00:00.000Z';
  const entry = (type: string, url: string) => ({
    type,
    url,
    skip_tls_verify: false,
    basic_auth: null,
    // the fake answers at once: a short timeout would only measure how busy the machine is
    poll_interval_s: options.pollIntervalS ?? 3600,
    timeout_ms: options.timeoutMs ?? 60_000,
    created_at: at,
    updated_at: at,
  });
  await mkdir(dataDir, { recursive: true });
  await writeFile(
    path.join(dataDir, 'datasources.yaml'),
    stringify({
      active: options.active ?? 'pangolin',
      sources: {
        pangolin: entry('pangolin', fake.pangolinUrl),
        traefik: entry('traefik', options.traefikUrl ?? fake.url),
      },
    }),
    { mode: 0o600 },
  );
}

/** A fake upstream and an app polling it (auth off, no templates); the startup sync has finished. */
export async function harness(
  t: ExecutionContext,
  options: SourceOptions & {
    config?: Record<string, unknown>;
    dataDir?: string;
    logStream?: NodeJS.WritableStream;
  } = {},
): Promise<Harness> {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dataDir = options.dataDir ?? path.join(await tempDir(t), 'data');
  await writeSources(dataDir, fake, options);
  const config = {
    auth: { mode: 'off' },
    templates: { seed: false },
    datasources: {
      pangolin_url: fake.pangolinUrl,
      traefik_url: options.traefikUrl ?? fake.url,
      active: options.active ?? 'pangolin',
    },
    ...options.config,
  };
  const app = await build(t, { dataDir, config, logStream: options.logStream });
  let report = await app.resources.started();
  // concurrent tests building apps in this process can block the event loop past a short fetch
  // timeout (tests of faults set one): that is the machine, not the code under test, so the sync
  // is retried until it succeeds or the wait deadline passes
  const deadline = Date.now() + WAIT_DEADLINE_MS;
  while (!report.ok && /timeout/.test(report.error ?? '') && Date.now() < deadline)
    report = await app.resources.syncNow();
  if (!report.ok) throw new Error(`startup sync failed: ${report.error}`);
  return { app, fake, dataDir };
}

/** Parsed JSON body plus status and headers of an injected request. */
export async function call(
  app: FastifyInstance,
  options: InjectOptions,
): Promise<{ status: number; body: any; headers: Record<string, unknown>; raw: string }> {
  const response = await app.inject(options);
  return {
    status: response.statusCode,
    body: response.body ? JSON.parse(response.body) : undefined,
    headers: response.headers,
    raw: response.body,
  };
}

/** Asserts a 4xx with the standard `{id, message}` body (and the status / id when given). */
export function assertClientError(
  t: ExecutionContext,
  response: { status: number; body: any },
  status?: number,
  id?: string,
): void {
  t.true(
    response.status >= 400 && response.status < 500,
    `expected a 4xx, got ${response.status} ${JSON.stringify(response.body)}`,
  );
  if (status !== undefined) t.is(response.status, status, JSON.stringify(response.body));
  t.is(typeof response.body?.id, 'string');
  t.is(typeof response.body?.message, 'string');
  if (id !== undefined) t.is(response.body.id, id, JSON.stringify(response.body));
}

/** Every file of `resources/` with its bytes and mtime, to prove that nothing was written. */
export async function resourceFiles(dataDir: string): Promise<Record<string, { text: string; mtimeMs: number }>> {
  const dir = path.join(dataDir, 'resources');
  const out: Record<string, { text: string; mtimeMs: number }> = {};
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    out[name] = { text: await readFile(file, 'utf8'), mtimeMs: (await stat(file)).mtimeMs };
  }
  return out;
}

/** Creates a middleware through the API (asserts 201). */
export async function createMiddleware(
  t: ExecutionContext,
  app: FastifyInstance,
  body: Record<string, unknown>,
): Promise<void> {
  const r = await call(app, { method: 'POST', url: '/api/middlewares', payload: body });
  t.is(r.status, 201, JSON.stringify(r.body));
}

/** Creates a service through the API (asserts 201). */
export async function createService(
  t: ExecutionContext,
  app: FastifyInstance,
  body: Record<string, unknown>,
): Promise<void> {
  const r = await call(app, { method: 'POST', url: '/api/services', payload: body });
  t.is(r.status, 201, JSON.stringify(r.body));
}

/**
 * A minimal Traefik API serving a router list given as text (so big integers stay exact) and empty
 * service lists; for cases the shared fixtures do not hold (a non-internal MaxInt64 router).
 */
export async function startTraefikWithRouters(
  t: ExecutionContext,
  routersText: string,
): Promise<{ url: string; setRouters(text: string): void }> {
  let current = routersText;
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.get('/api/http/routers', async (_request, reply) =>
    reply.header('x-next-page', '1').type('application/json').send(current),
  );
  for (const protocol of ['http', 'tcp', 'udp']) {
    app.get(`/api/${protocol}/services`, async (_request, reply) =>
      reply.header('x-next-page', '1').type('application/json').send('[]'),
    );
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    setRouters: (text) => {
      current = text;
    },
  };
}

export const NEXTCLOUD = '1-nextcloud-router';
export const GRAFANA = '2-grafana-router';
export const WIKI = '3-5e2f283f21admin29-regex-wiki-router';
export const JELLYFIN = '6-jellyfin-media-router';
export const PAPERLESS = '8-paperless-ngx-router';
