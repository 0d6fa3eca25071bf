/** buildApp(opts): the whole server as one function; tests call it and use inject() or listen(). */
import type { DestinationStream } from 'pino';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { AppConfig } from './config/schema.ts';
import { answerClientError } from './errors/client-error.ts';
import { installErrorHandling, sendError } from './errors/handler.ts';
import { errors, validationError } from './errors/app-error.ts';
import { API_VERSION, installVersioning, requestIdFor } from './versioning.ts';
import { openStore } from './store/index.ts';
import { retire, type BuiltinGroup, type Lifecycle } from './types.ts';
import { openSettings } from './settings.ts';
import authPlugin from './auth/index.ts';
import auditPlugin from './audit.ts';
import corsPlugin from './cors.ts';
import pluginLoader from './plugin-loader/index.ts';
import { installRequestValidation } from './validation.ts';
import { loneSurrogateAt, valueFault } from './nesting.ts';
import { LazyCompiles, lazySerializers } from './lazy-compile.ts';
import { RequestLogController } from './request-log.ts';
import { standalone, type Cluster } from './cluster/standalone.ts';
import { DataDirLockSignal } from './data-dir-lock.ts';
import { FastRoutes } from './fast-routes.ts';

export interface BuildOptions {
  config: AppConfig;
  /** Built-in endpoint groups in dependency order (plugins/index.ts). */
  groups: BuiltinGroup[];
  /** Pino options, or false (tests). Default: JSON lines at config.log.level. */
  logger?: FastifyServerOptions['logger'];
  /**
   * Destination for the default JSON logger: the server's synchronous stdout (core/server.ts), or
   * a stream of a test capturing logs with their production settings.
   */
  logStream?: DestinationStream;
  now?: () => Date;
  /** Restart counter reported by GET /api/system/plugins (X-App-Generation). */
  generation?: number;
  /** Cluster membership (server.ts owns it across hot reloads); default: a standalone server, its own leader. */
  cluster?: Cluster;
  /** The data dir lock's loss (server.ts owns the lock); default: a lock that is never lost. */
  dataDirLock?: DataDirLockSignal;
  /** Serve through an outer server (hot reload, core/app-host.ts). */
  serverFactory?: FastifyServerOptions['serverFactory'];
}

/** How long after ready the data dir watcher starts (hand edits meanwhile are caught up then). */
export const WATCH_START_DELAY_MS = 1000;

const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.password',
  '*.token',
  '*.p12_password',
];

/**
 * Hides `access_token` query values in logged URLs (API.md §2.3), also under a key the query parser
 * decodes to it or to one of its forms (`access%5Ftoken=`, `access_token[a]=`, `access_token[]=`).
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0 || !/access|%/i.test(url)) return url;
  const pairs = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq >= 0 && isTokenKey(pair.slice(0, eq)) ? `${pair.slice(0, eq)}=***` : pair;
    });
  return `${url.slice(0, start)}?${pairs.join('&')}`;
}

function isTokenKey(key: string): boolean {
  let decoded = key;
  try {
    decoded = decodeURIComponent(key.replaceAll('+', ' '));
  } catch {
    // bad percent-encoding: judged as written
  }
  return decoded.toLowerCase().startsWith('access_token');
}

/** Builds the app: core capabilities first, then the built-in groups, then third-party plugins. */
export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const lazy = new LazyCompiles();
  const app = Fastify({
    // route schemas compile on first use or in the background after ready (core/lazy-compile.ts)
    schemaController: { compilersFactory: { buildSerializer: lazySerializers(lazy) } },
    logger: options.logger ?? {
      level: config.log.level,
      ...(options.logStream ? { stream: options.logStream } : {}),
      redact: { paths: REDACT, censor: '***' },
      serializers: {
        req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip, requestId: req.id }),
      },
    },
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
    // one line per request, at debug for polls and health checks (core/request-log.ts)
    logController: new RequestLogController(),
    genReqId: (req) => requestIdFor(req.headers['x-request-id']),
    requestIdHeader: false,
    bodyLimit: config.server.body_limit,
    requestTimeout: config.server.request_timeout_ms,
    // hop count, CIDR list or boolean: all forms Fastify's proxy-addr accepts
    trustProxy: config.server.trust_proxy as never,
    forceCloseConnections: 'idle',
    // a boot-time guard only: built-in groups load every data file while they register (10,000
    // resources take seconds on a slow disk), and third-party plugins have the loader's own 10 s limit
    pluginTimeout: 120_000,
    // what Node's HTTP parser refuses (oversized headers, a NUL in a header) answers {id, message} too
    clientErrorHandler: answerClientError,
    // the router rejects over-long parameters and bad percent-encoding before any hook runs
    frameworkErrors: (error, request, reply) => {
      reply.header('api-version', API_VERSION).header('vary', 'Accept').header('x-request-id', request.id);
      const message =
        error.code === 'FST_ERR_BAD_URL'
          ? 'the URL path is not valid (bad percent-encoding)'
          : 'a path parameter is too long';
      return sendError(reply, errors.validation(message, [{ path: '/params', message }]));
    },
  }) as unknown as FastifyInstance;

  installErrorHandling(app, config.server.body_limit);
  installRequestValidation(app, lazy);
  lazy.warmAfterReady(app);
  installVersioning(app);
  installJsonParser(app);
  // "no body" validates as {}: routes whose fields are all optional accept it, and a route with
  // required fields answers 422 naming them (API.md §2.1)
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD') request.body = {};
    done();
  });

  app.decorate('config', config);
  app.decorate('now', options.now ?? (() => new Date()));
  app.decorate('cluster', options.cluster ?? standalone());
  app.decorate('dataDirLock', options.dataDirLock ?? new DataDirLockSignal());
  const lifecycle: Lifecycle = { restarting: false, retiring: new Set() };
  app.decorate('lifecycle', lifecycle);
  // answered before Fastify by the hot-reload host (core/fast-routes.ts); inject() always uses Fastify
  app.decorate('fastRoutes', new FastRoutes(config, app.log));
  app.addHook('preClose', (done) => {
    retire(lifecycle);
    done();
  });
  // cluster mode: the data dir is brought in line with etcd before the store reads it, and the
  // store commits every write to etcd first (core/cluster/replication.ts)
  await app.cluster.prepareDataDir();
  const store = await openStore({
    dataDir: config.storage.data_dir,
    logger: app.log.child({ component: 'store' }),
    replica: app.cluster.replica,
    // attached a second after the app is ready (below): the first provider config does not wait
    // for chokidar's walk of every data file; what changes meanwhile is caught up then
    watch: 'later',
    watchMode: config.storage.watch,
    pollIntervalMs: config.storage.poll_interval_ms,
    reconcileMs: config.storage.reconcile_ms,
  });
  app.decorate('store', store);
  // a second after ready: chokidar's walk of every data file (0.1–0.2 s at 2,000 files) then does
  // not compete with the first discovery sync for the first full provider config (issue 11)
  let watchTimer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    watchTimer = setTimeout(() => {
      void store
        .startWatching()
        .catch((err) => app.log.error({ err }, 'the data dir watcher did not start; hand edits need a restart'));
    }, WATCH_START_DELAY_MS);
  });
  app.addHook('preClose', (done) => {
    clearTimeout(watchTimer);
    done();
  });
  const detach = app.cluster.attachStore(store);
  app.addHook('onClose', async () => {
    detach();
    await store.close();
  });
  try {
    app.decorate('settings', await openSettings(store));

    await app.register(corsPlugin);
    await app.register(authPlugin);
    await app.register(auditPlugin);
    for (const group of options.groups) await app.register(group.plugin, { config });
    await app.register(pluginLoader, {
      config,
      builtinGroups: options.groups.map((group) => group.name),
      generation: options.generation ?? 1,
    });
  } catch (err) {
    // nobody gets the instance to close: release the store (watcher) and what the groups opened
    await app.close().catch(() => store.close());
    throw err;
  }
  return app;
}

/** JSON bodies only (415 otherwise); an empty body is "no body", so all-optional routes accept it. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // bytes, not a string: Node's decoding turns invalid UTF-8 into U+FFFD, silently storing what the client never sent
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  app.addContentTypeParser(/^application\/json(\s*;.*)?$/i, { parseAs: 'buffer' }, (request, bytes, done) => {
    if ((bytes as Buffer).length === 0) return done(null, undefined);
    let body: string;
    try {
      body = utf8.decode(bytes as Buffer);
    } catch {
      return done(errors.invalidJson('request body is not valid UTF-8'), undefined);
    }
    parseJson(request, body, (err, value) => {
      if (err) return done(errors.invalidJson(), undefined);
      // before anything walks the body: more than 64 levels (handlers recurse, API.md §2.10), and
      // 1e309, which JSON.parse turns into Infinity (no field of any body may hold it, §2.1)
      const fault = valueFault(value);
      if (fault !== null) return done(validationError([{ path: fault.path, message: fault.message }]), undefined);
      // a lone surrogate can only come from a \uD800-\uDFFF escape: the text says whether to look
      const lone = SURROGATE_ESCAPE.test(body) ? loneSurrogateAt(value) : null;
      if (lone !== null)
        return done(
          validationError([
            { path: lone, message: 'must be valid Unicode text (it holds a lone UTF-16 surrogate, \\uD800-\\uDFFF)' },
          ]),
          undefined,
        );
      done(null, value);
    });
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(errors.unsupportedMediaType(String(request.headers['content-type'] ?? '')), undefined);
  });
}
