/**
 * A fake Traefik API and Pangolin HTTP-provider endpoint on 127.0.0.1 for tests (TESTING.md "Fake
 * Traefik and Pangolin"). Serves the shared fixtures as file text, so MaxInt64 priorities stay
 * exact, and injects faults through a mutable `state` read on every request.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import type { TestFn } from 'ava';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { parseLossless, stringifyCanonical } from '../../model/lossless-json.ts';
import { fixture } from './shared.ts';

export type Fault = null | '500' | '502' | '404' | 'timeout' | 'reset' | 'malformed' | 'empty' | 'array' | 'object';
export type PangolinFile = 'traefik-config.json' | 'traefik-config-changed.json' | 'traefik-config-empty.json';

/** Mutable behaviour of the fake; tests change it between calls. */
export interface FakeState {
  fault: Fault;
  /** Only requests whose path starts with this get the fault (null: every request). */
  faultPath: string | null;
  delayMs: number;
  pangolinFile: PangolinFile;
  /** When set, requests without these credentials get 401. */
  basicAuth: { username: string; password: string } | null;
  /** Page size forced on Traefik lists (null: honour `per_page`, default 100 like Traefik). */
  pageSize: number | null;
  /** Only list requests for this `page` get the fault (null: any page); combines with `faultPath`. */
  faultPage: number | null;
  /** Rewrites the text of `pangolinFile` before it is served (an upstream change the fixtures lack); null: as is. */
  pangolinEdit: ((text: string) => string) | null;
}

/** A fresh fake's state: no fault, no delay, the base Pangolin file, no auth, pages as asked. */
export function initialFakeState(): FakeState {
  return {
    fault: null,
    faultPath: null,
    delayMs: 0,
    pangolinFile: 'traefik-config.json',
    basicAuth: null,
    pageSize: null,
    faultPage: null,
    pangolinEdit: null,
  };
}

/** One request as the fake received it. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeUpstream {
  /** Base URL of the fake Traefik API, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Pangolin data source URL (`url + '/api/v1'`). */
  pangolinUrl: string;
  state: FakeState;
  /** Every request received, in order (the request counter is `requests.length`). */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  /** Serve HTTPS with this key and certificate (PEM) instead of HTTP. */
  https?: { key: string; cert: string };
}

const LISTS: Record<string, string> = {
  entrypoints: 'entrypoints.json',
  'http/routers': 'http-routers.json',
  'http/services': 'http-services.json',
  'http/middlewares': 'http-middlewares.json',
  'tcp/routers': 'tcp-routers.json',
  'tcp/services': 'tcp-services.json',
  'tcp/middlewares': 'tcp-middlewares.json',
  'udp/routers': 'udp-routers.json',
  'udp/services': 'udp-services.json',
};
const SINGLES: Record<string, string> = { version: 'version.json', overview: 'overview.json', rawdata: 'rawdata.json' };
const PANGOLIN_FILES: PangolinFile[] = [
  'traefik-config.json',
  'traefik-config-changed.json',
  'traefik-config-empty.json',
];
// Traefik's wording for a missing object: "router not found: x@file"
const SINGULAR: Record<string, string> = {
  routers: 'router',
  services: 'service',
  middlewares: 'middleware',
  entrypoints: 'entry point',
};

async function loadFixtures(): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const file of [...Object.values(LISTS), ...Object.values(SINGLES)]) {
    texts.set(file, await readFile(fixture('traefik-api', file), 'utf8'));
  }
  for (const file of PANGOLIN_FILES) texts.set(file, await readFile(fixture('pangolin', file), 'utf8'));
  return texts;
}

function sendJsonText(reply: FastifyReply, text: string, code = 200): FastifyReply {
  return reply.code(code).type('application/json; charset=utf-8').send(text);
}

function authorized(request: FastifyRequest, expected: { username: string; password: string }): boolean {
  const token = Buffer.from(`${expected.username}:${expected.password}`).toString('base64');
  return request.headers.authorization === `Basic ${token}`;
}

/** Answers with the configured fault, or returns false to let the request through. */
function applyFault(fault: Fault, request: FastifyRequest, reply: FastifyReply): boolean {
  switch (fault) {
    case null:
      return false;
    case '500':
    case '502':
    case '404':
      sendJsonText(reply, JSON.stringify({ message: `injected fault ${fault}` }), Number(fault));
      return true;
    case 'timeout':
      // never answer; close() ends the socket (forceCloseConnections)
      reply.hijack();
      return true;
    case 'reset':
      reply.hijack();
      request.raw.socket.destroy();
      return true;
    case 'malformed':
      sendJsonText(reply, '{"http": {"routers": {');
      return true;
    case 'empty':
      sendJsonText(reply, '');
      return true;
    case 'array':
      sendJsonText(reply, '[]');
      return true;
    case 'object':
      sendJsonText(reply, '{}');
      return true;
  }
}

/** Traefik's `search`: a case-insensitive substring of the name or (routers) the rule. */
function searchItems(items: Array<Record<string, unknown>>, search: string): Array<Record<string, unknown>> {
  const needle = search.toLowerCase();
  return items.filter((item) =>
    [item.name, item.rule].some((value) => typeof value === 'string' && value.toLowerCase().includes(needle)),
  );
}

function registerTraefikRoutes(app: FastifyInstance, texts: Map<string, string>, state: FakeState): void {
  for (const [name, file] of Object.entries(SINGLES)) {
    app.get(`/api/${name}`, async (_request, reply) => sendJsonText(reply, texts.get(file)!));
  }
  for (const [path, file] of Object.entries(LISTS)) {
    const text = texts.get(file)!;
    const items = parseLossless(text) as Array<Record<string, unknown>>;
    app.get(`/api/${path}`, async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      const size = state.pageSize ?? (Number(query.per_page) || 100);
      const page = Number(query.page) || 1;
      const list = query.search ? searchItems(items, query.search) : items;
      if (page === 1 && list.length <= size)
        return sendJsonText(reply.header('x-next-page', '1'), list === items ? text : stringifyCanonical(list));
      const start = (page - 1) * size;
      if (start >= list.length && page > 1) {
        return sendJsonText(
          reply,
          JSON.stringify({ message: `invalid request: page: ${page}, per_page: ${size}` }),
          400,
        );
      }
      const next = start + size < list.length ? String(page + 1) : '1';
      return sendJsonText(reply.header('x-next-page', next), stringifyCanonical(list.slice(start, start + size)));
    });
    const singular = SINGULAR[path.split('/').pop()!];
    app.get(`/api/${path}/:name`, async (request, reply) => {
      const { name } = request.params as { name: string };
      const item = items.find((entry) => entry.name === name);
      if (!item) return sendJsonText(reply, JSON.stringify({ message: `${singular} not found: ${name}` }), 404);
      return sendJsonText(reply, stringifyCanonical(item));
    });
  }
}

/** Starts the fake on 127.0.0.1, port 0; close it in `after.always`. */
export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const texts = await loadFixtures();
  const state = initialFakeState();
  const requests: RecordedRequest[] = [];
  // the https variant has another server type; the routes do not care
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    ...(options.https ? { https: options.https } : {}),
  }) as unknown as FastifyInstance;

  app.addHook('onRequest', async (request, reply) => {
    requests.push({ method: request.method, url: request.url, headers: { ...request.headers } });
    if (state.delayMs > 0) await sleep(state.delayMs);
    if (state.basicAuth && !authorized(request, state.basicAuth)) {
      reply.header('www-authenticate', 'Basic realm="fake"');
      return sendJsonText(reply, JSON.stringify({ message: 'unauthorized' }), 401);
    }
    const [path, search = ''] = request.url.split('?');
    const onPage = state.faultPage === null || Number(new URLSearchParams(search).get('page')) === state.faultPage;
    if ((state.faultPath === null || path.startsWith(state.faultPath)) && onPage) {
      if (applyFault(state.fault, request, reply)) return reply;
    }
  });

  registerTraefikRoutes(app, texts, state);
  app.get('/api/v1/traefik-config', async (_request, reply) => {
    const text = texts.get(state.pangolinFile)!;
    return sendJsonText(reply, state.pangolinEdit ? state.pangolinEdit(text) : text);
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const url = `${options.https ? 'https' : 'http'}://127.0.0.1:${port}`;
  return { url, pangolinUrl: `${url}/api/v1`, state, requests, close: () => app.close() };
}

/**
 * One fake for a whole test file, in `t.context.fake`: started before the first test, closed after
 * the last, its `state` back to the initial one before each test (requests are kept).
 */
export function useFakeUpstream(test: TestFn<{ fake: FakeUpstream }>): void {
  test.before(async (t) => {
    t.context.fake = await startFakeUpstream();
  });
  test.after.always(async (t) => {
    await t.context.fake?.close();
  });
  test.beforeEach((t) => {
    Object.assign(t.context.fake.state, initialFakeState());
  });
}
