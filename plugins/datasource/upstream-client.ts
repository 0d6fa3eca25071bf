/**
 * HTTP client for the data sources (API.md §4.5, §4.7): Pangolin's HTTP-provider body and the
 * Traefik API. Never throws: every call answers `{ok: true, …}` or `{ok: false, error}` where the
 * error names the system and never holds the password.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Agent } from 'undici';
import { APP_VERSION } from '../../core/version.ts';
import { parseLossless } from '../../model/lossless-json.ts';
import { exactPriority } from '../../model/upstream-routers.ts';
import { isObject } from '../../core/ids.ts';

/** A data source as the client needs it (API.md §4.5 DataSource fields). */
export interface UpstreamSource {
  type: 'pangolin' | 'traefik';
  url: string;
  skip_tls_verify: boolean;
  basic_auth: { username: string; password: string } | null;
  timeout_ms: number;
}

export interface FetchOptions {
  /** Aborts the call early (shutdown); the source's timeout_ms applies per request anyway. */
  signal?: AbortSignal;
}

export type FetchFailure = { ok: false; error: string; latency_ms: number };
export type PangolinConfigResult =
  { ok: true; body: Record<string, unknown>; text: string; hash: string; latency_ms: number } | FetchFailure;
export type TraefikListResult =
  { ok: true; items: Array<Record<string, unknown>>; latency_ms: number; hash?: string } | FetchFailure;
export type TraefikObjectResult = { ok: true; body: Record<string, unknown>; latency_ms: number } | FetchFailure;

/** Options of a Traefik list fetch: extra query parameters (e.g. `search`) sent with every page. */
export interface ListOptions extends FetchOptions {
  query?: Record<string, string>;
  /** Also answer `hash`: SHA-1 of every page's bytes (the live checker skips work when a list did not change). */
  hash?: boolean;
}
export type TraefikServicesResult =
  | {
      ok: true;
      http: Array<Record<string, unknown>>;
      tcp: Array<Record<string, unknown>>;
      udp: Array<Record<string, unknown>>;
      latency_ms: number;
    }
  | FetchFailure;

/** Outcome of POST /api/datasource/:name/test and the deep health check. */
export interface ProbeResult {
  ok: boolean;
  latency_ms: number;
  routers: number | null;
  version: string | null;
  error: string | null;
}

const USER_AGENT = `stack-manager/${APP_VERSION}`;
const MAX_PAGES = 100;
const TLS_CODES = /CERT|SELF_SIGNED|ERR_TLS|ERR_SSL|EPROTO|UNABLE_TO_(VERIFY|GET)/;

/** Failure with a message already fit for users (system named, secrets removed). */
class UpstreamError extends Error {}

interface Session {
  system: 'Pangolin' | 'Traefik';
  source: UpstreamSource;
  /** only for skip_tls_verify; otherwise Node's own fetch dispatcher (keep-alive connections) */
  agent: Agent | undefined;
  signal?: AbortSignal;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Splits user info off the URL: fetch refuses it, and it must never reach a message. */
function splitUrl(
  system: string,
  url: string,
): { url: string; credentials: { username: string; password: string } | null } {
  try {
    const parsed = new URL(url);
    const credentials =
      parsed.username || parsed.password
        ? { username: decode(parsed.username), password: decode(parsed.password) }
        : null;
    parsed.username = '';
    parsed.password = '';
    return { url: parsed.toString(), credentials };
  } catch {
    throw new UpstreamError(`${system} URL is invalid (absolute http or https URL expected)`);
  }
}

function redact(message: string, source: UpstreamSource): string {
  const secrets = [source.basic_auth?.password, URL.canParse(source.url) ? new URL(source.url).password : ''];
  for (const secret of secrets) {
    if (secret) message = message.split(secret).join('***').split(decode(secret)).join('***');
  }
  return message;
}

function networkError(session: Session, err: unknown, url: string, timedOut: boolean): UpstreamError {
  const { system, source } = session;
  if (timedOut)
    return new UpstreamError(`${system} did not answer within ${source.timeout_ms} ms (timeout) for GET ${url}`);
  if (session.signal?.aborted) return new UpstreamError(`${system} request aborted (GET ${url})`);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? '';
  const detail = cause?.message || (err as Error).message;
  if (TLS_CODES.test(code) || /certificate|TLS|SSL/i.test(detail)) {
    const hint = source.skip_tls_verify ? '' : ' (skip_tls_verify accepts a self-signed certificate)';
    return new UpstreamError(`${system} TLS error for GET ${url}: ${detail}${hint}`);
  }
  if (code === 'ECONNREFUSED') return new UpstreamError(`${system} refused the connection for GET ${url}`);
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') {
    return new UpstreamError(`${system} closed the connection before answering GET ${url} (${code})`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new UpstreamError(`${system} host not found for GET ${url}`);
  return new UpstreamError(`${system} unreachable for GET ${url}: ${detail}${code ? ` (${code})` : ''}`);
}

function statusError(session: Session, response: Response, raw: Buffer, url: string): UpstreamError {
  let detail = '';
  try {
    const body = JSON.parse(raw.toString('utf8')) as unknown;
    if (isObject(body) && typeof body.message === 'string') detail = `: ${body.message.slice(0, 200)}`;
  } catch {
    // not JSON: the status says enough
  }
  const auth = response.status === 401 || response.status === 403 ? ' (check basic_auth)' : '';
  const text = response.statusText ? ` ${response.statusText}` : '';
  return new UpstreamError(`${session.system} answered HTTP ${response.status}${text} for GET ${url}${auth}${detail}`);
}

/** One GET answered 200; the body is read before the timeout ends. */
async function get(session: Session, path: string): Promise<{ raw: Buffer; headers: Headers; url: string }> {
  const { source } = session;
  const { url, credentials } = splitUrl(session.system, source.url.replace(/\/+$/, '') + path);
  const timeout = AbortSignal.timeout(source.timeout_ms);
  const signal = session.signal ? AbortSignal.any([session.signal, timeout]) : timeout;
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'application/json' };
  const auth = source.basic_auth ?? credentials;
  if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  let response: Response;
  let raw: Buffer;
  try {
    // the undici v7 Agent is accepted by Node's fetch; its types come from another undici copy
    response = await fetch(url, { headers, signal, dispatcher: session.agent } as RequestInit);
    raw = Buffer.from(await response.arrayBuffer());
  } catch (err) {
    throw networkError(session, err, url, timeout.aborted);
  }
  if (response.status !== 200) throw statusError(session, response, raw, url);
  return { raw, headers: response.headers, url };
}

function parseBody(session: Session, raw: Buffer, url: string, expected: 'object' | 'array'): unknown {
  // a BOM is not JSON, but some proxies add one; the hash still covers the raw bytes
  const text = raw.toString('utf8').replace(/^\uFEFF/, '');
  if (text.trim() === '')
    throw new UpstreamError(`${session.system} sent an empty body for GET ${url}, expected a JSON ${expected}`);
  let body: unknown;
  try {
    body = parseLossless(text);
  } catch (err) {
    throw new UpstreamError(
      `${session.system} sent invalid JSON for GET ${url}: ${(err as Error).message.slice(0, 200)}`,
    );
  }
  const kind = Array.isArray(body)
    ? 'array'
    : body === null
      ? 'null'
      : typeof body === 'object'
        ? 'object'
        : typeof body;
  if (kind !== expected)
    throw new UpstreamError(`${session.system} sent a JSON ${kind} for GET ${url}, expected a JSON ${expected}`);
  return body;
}

/**
 * The undici package's Agent, loaded on first use: it is the only way to give Node's fetch
 * `rejectUnauthorized: false`, and importing it costs ~90 ms of startup (issue 11) that a source
 * verifying TLS, the default, never needs.
 */
let agentClass: Promise<typeof Agent> | null = null;
const insecureAgent = () => (agentClass ??= import('undici').then((undici) => undici.Agent));

/** Runs `work` with a dispatcher for this source, timing it and turning errors into failures. */
async function run<T extends object>(
  system: Session['system'],
  source: UpstreamSource,
  options: FetchOptions,
  work: (session: Session) => Promise<T>,
): Promise<(T & { ok: true; latency_ms: number }) | FetchFailure> {
  const started = performance.now();
  const agent = source.skip_tls_verify
    ? new (await insecureAgent())({ connect: { rejectUnauthorized: false } })
    : undefined;
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const result = await work({ system, source, agent, signal: options.signal });
    return { ok: true, ...result, latency_ms: elapsed() };
  } catch (err) {
    const message = err instanceof UpstreamError ? err.message : `${system} request failed: ${(err as Error).message}`;
    return { ok: false, error: redact(message, source), latency_ms: elapsed() };
  } finally {
    // destroy, not close: a hung upstream must not keep the call waiting
    agent?.destroy().catch(() => {});
  }
}

/** GET `{url}/traefik-config` (Pangolin): the body as a JSON object, its text and SHA-256. */
export function fetchPangolinConfig(source: UpstreamSource, options: FetchOptions = {}): Promise<PangolinConfigResult> {
  return run('Pangolin', source, options, async (session) => {
    const { raw, url } = await get(session, '/traefik-config');
    const body = parseBody(session, raw, url, 'object') as Record<string, unknown>;
    return { body, text: raw.toString('utf8'), hash: createHash('sha256').update(raw).digest('hex') };
  });
}

async function listPages(
  session: Session,
  path: string,
  query: Record<string, string> = {},
  hash?: Hash,
): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  const extra = Object.keys(query).length > 0 ? `&${new URLSearchParams(query).toString()}` : '';
  for (let page = 1, count = 1; ; count++) {
    const { raw, headers, url } = await get(session, `${path}?per_page=1000&page=${page}${extra}`);
    hash?.update(raw);
    for (const item of parseBody(session, raw, url, 'array') as unknown[]) if (isObject(item)) items.push(item);
    // Traefik sends the next page number, or 1 on the last page
    const next = Number(headers.get('x-next-page'));
    if (!Number.isInteger(next) || next <= page) return items;
    if (count >= MAX_PAGES) throw new UpstreamError(`${session.system} list ${path} has more than ${MAX_PAGES} pages`);
    page = next;
  }
}

/** A whole Traefik API list (`/api/http/services`…), every page, parsed losslessly; `query` is sent with each page. */
export function fetchTraefikList(
  source: UpstreamSource,
  path: string,
  options: ListOptions = {},
): Promise<TraefikListResult> {
  return run('Traefik', source, options, async (session) => {
    const hash = options.hash ? createHash('sha1') : undefined;
    const items = await listPages(session, path, options.query, hash);
    return hash ? { items, hash: hash.digest('hex') } : { items };
  });
}

/** One Traefik API object (`/api/overview`, `/api/version`), parsed losslessly; anything but a JSON object fails. */
export function fetchTraefikObject(
  source: UpstreamSource,
  path: string,
  options: FetchOptions = {},
): Promise<TraefikObjectResult> {
  return run('Traefik', source, options, async (session) => {
    const { raw, url } = await get(session, path);
    return { body: parseBody(session, raw, url, 'object') as Record<string, unknown> };
  });
}

/** All Traefik HTTP routers; `priority` is exact (from `priorityStr` when present, BigInt above 2^53−1). */
export function fetchTraefikRouters(source: UpstreamSource, options: FetchOptions = {}): Promise<TraefikListResult> {
  return run('Traefik', source, options, async (session) => {
    const items = await listPages(session, '/api/http/routers');
    for (const item of items) {
      const priority = exactPriority(item);
      if (priority !== null) item.priority = priority;
    }
    return { items };
  });
}

/** Traefik's HTTP, TCP and UDP service lists (for discovered services); fails if any list fails. */
export function fetchTraefikServices(
  source: UpstreamSource,
  options: FetchOptions = {},
): Promise<TraefikServicesResult> {
  return run('Traefik', source, options, async (session) => {
    const [http, tcp, udp] = await Promise.all(
      ['http', 'tcp', 'udp'].map((protocol) => listPages(session, `/api/${protocol}/services`)),
    );
    return { http, tcp, udp };
  });
}

/** Probe of API.md §4.5: Pangolin config fetch, or Traefik router list plus version (null when /api/version fails). */
export async function probeSource(source: UpstreamSource, options: FetchOptions = {}): Promise<ProbeResult> {
  const result =
    source.type === 'pangolin'
      ? await run('Pangolin', source, options, async (session) => {
          const { raw, url } = await get(session, '/traefik-config');
          const body = parseBody(session, raw, url, 'object') as Record<string, unknown>;
          const routers =
            isObject(body.http) && isObject(body.http.routers) ? Object.keys(body.http.routers).length : 0;
          return { routers, version: null };
        })
      : await run('Traefik', source, options, async (session) => {
          const [version, routers] = await Promise.all([
            // the routers decide: a router to api@internal may let only the lists through (404 here)
            get(session, '/api/version')
              .then(({ raw, url }) => parseBody(session, raw, url, 'object') as Record<string, unknown>)
              .catch(() => null),
            listPages(session, '/api/http/routers'),
          ]);
          return { routers: routers.length, version: typeof version?.Version === 'string' ? version.Version : null };
        });
  if (!result.ok)
    return { ok: false, latency_ms: result.latency_ms, routers: null, version: null, error: result.error };
  return { ok: true, latency_ms: result.latency_ms, routers: result.routers, version: result.version, error: null };
}
