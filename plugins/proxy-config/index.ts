/**
 * The Traefik HTTP provider endpoint (API.md §4.9): GET serves the generated config from memory,
 * POST /invalidate forces a fetch and a regeneration, GET /status reports on both. Served at
 * /api/proxy-config, /api/v1/proxy-config and middleware-manager's /api/v1/traefik-config (§7).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import path from 'node:path';
import { existsSync } from 'node:fs';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import { errors } from '../../core/errors/app-error.ts';
import { ErrorBody } from '../../model/schemas.ts';
import type { RouteScope, TypeBoxRequestTypeProvider } from '../../model/http.ts';
import { createSchemaChecker } from './schema-check.ts';
import { DEFAULT_TRAEFIK_SCHEMA_PATH } from '../../model/traefik-schema.ts';
import { ConfigProvider } from './service.ts';
import { proxyConfigErrors } from './errors.ts';
import { InvalidateResult, ProviderQuery, Status, type StatusBody } from './schemas.ts';
import { acceptsGzip, matchesIfNoneMatch, wantsYaml } from './negotiate.ts';
import { generationInputs } from './inputs.ts';
import { providerHeaders } from './headers.ts';
import { fastProviderRoute } from './fast-route.ts';
import { ProviderAnswerLog } from './answer-log.ts';
import { loadSaved, SnapshotWriter, type SavedGeneration, type Servable } from './snapshot.ts';
import type { PollCount } from './targets/pollers.ts';
import {
  recordPoll,
  recordRefusedPoll,
  recordUnavailablePoll,
  setupTargets,
  targetDangling,
  targetStatuses,
  type Targets,
} from './targets/setup.ts';
import { targetRoutes } from './targets/routes.ts';
import { serveTarget } from './targets/serve.ts';
import { TargetParams } from './targets/schemas.ts';
import { TraefikVersion, VERSION_READ_INTERVAL_MS } from './traefik-version.ts';
import liveStatus from './live/index.ts';

export type { PollCount } from './targets/pollers.ts';

/** What GET /metrics reads of the provider (API.md §4.22), at scrape time. */
export interface ProviderStats {
  /** Polls per document, remote address and status (200/304). */
  polls(): PollCount[];
  /** Bytes of the JSON document each target serves now, `default` first. */
  documentBytes(): Array<{ target: string; bytes: number }>;
}

declare module 'fastify' {
  interface FastifyInstance {
    providerStats: ProviderStats;
    proxyConfig: ConfigProvider;
    /** The Traefik version the default document is gated for (API.md §4.9 G14). */
    traefikVersion: TraefikVersion;
  }
}

export interface ProxyConfigOptions extends Partial<GroupOptions> {
  /** Traefik's dynamic-config JSON Schema (G13); default: the copy shipped in config/schemas/. */
  schemaPath?: string;
}

export const PREFIXES = ['/api/proxy-config', '/api/v1/proxy-config', '/api/v1/traefik-config'];

async function proxyConfig(app: FastifyInstance, options: ProxyConfigOptions): Promise<void> {
  const schemaPath = options.schemaPath ?? DEFAULT_TRAEFIK_SCHEMA_PATH;
  // the schema check only reports (G13); without the schema file the provider still serves
  const schemaCheck = existsSync(schemaPath) ? createSchemaChecker(schemaPath, { memo: true }) : null;
  if (!schemaCheck) app.log.warn({ schemaPath }, 'Traefik JSON schema not found: schema_warnings stay empty');
  const log = app.log.child({ component: 'proxy-config' });
  // G14: the setting, else the explorer's Traefik source (the proxy group, when loaded)
  const version = new TraefikVersion({
    setting: app.config.proxy.traefik_version,
    read: app.hasDecorator('proxyExplorer') ? () => app.proxyExplorer.version() : null,
    intervalMs: VERSION_READ_INTERVAL_MS,
    onError: (err) => log.debug({ err }, 'reading the Traefik version failed; the last one known is kept'),
  });
  app.decorate('traefikVersion', version);
  const provider = new ConfigProvider({
    inputs: generationInputs(app),
    schemaCheck,
    logger: log,
    now: app.now,
    traefikVersion: () => version.current(),
  });
  app.decorate('proxyConfig', provider);
  // provider targets (several Traefik instances): documents derived from the default one
  const targets = await setupTargets(app, provider, () => version.current());
  app.decorate('providerStats', {
    polls: () => targets.pollers.counts(),
    documentBytes: () => [
      ...(provider.current() ? [{ target: 'default', bytes: provider.current()!.json.body.length }] : []),
      ...targets.service.records().flatMap((record) => {
        const document = targets.documents.get(record.id);
        return document ? [{ target: record.id, bytes: document.json.body.length }] : [];
      }),
    ],
  } satisfies ProviderStats);
  // the last run's config, served stale until the first generation of this run (issue 11)
  let saved: SavedGeneration | null = await loadSaved(app.store.dataDir);
  const snapshots = new SnapshotWriter(app.store.dataDir, (err) =>
    log.warn({ err }, 'saving the provider config snapshot failed'),
  );
  const stopSaving = provider.onGenerated((generation) => {
    saved = null;
    snapshots.save(generation);
  });
  // the answer object is reused while it holds: a poll allocates nothing here (issue 11)
  let answer: { generation: Servable; stale: boolean } | null = null;
  const served = (): { generation: Servable; stale: boolean } | null => {
    const generation = provider.current() ?? saved;
    if (!generation) return null;
    const stale = generation === saved || isStale(app);
    if (answer === null || answer.generation !== generation || answer.stale !== stale) answer = { generation, stale };
    return answer;
  };
  // what each poll is answered, logged once per change, never per poll at info (API.md §2.11)
  const answers = new ProviderAnswerLog(
    log,
    () => app.upstream.lastError,
    () => provider.current() === null && saved !== null,
  );
  const polled: Served = () => {
    const current = served();
    answers.note(current === null ? 'unavailable' : current.stale ? 'stale' : 'ok');
    return current;
  };

  // G1: every input change regenerates (coalesced); requests only copy the stored bytes
  const unsubscribe = [
    app.store.onAnyChange(() => provider.invalidate()),
    app.upstream.onChange(() => provider.invalidate()),
    app.datasources.onChange(() => {
      provider.invalidate();
      void version.refresh();
    }),
    version.onChange(() => {
      log.info(version.view(), 'Traefik version for the provider documents');
      provider.invalidate();
      targets.documents.invalidate();
    }),
    // etag without quotes, as POST /invalidate reports it
    provider.onGenerated((generation) =>
      app.events.publish('provider', {
        etag: generation.json.etag.slice(1, -1),
        generated_at: generation.generatedAt,
        target: 'default',
      }),
    ),
  ];
  app.addHook('onReady', async () => {
    version.start();
    await provider.regenerate();
  });
  app.addHook('onClose', async () => {
    for (const off of unsubscribe) off();
    stopSaving();
    targets.close();
    version.close();
    provider.close();
    await snapshots.flush();
  });

  await app.register(async (scope) => {
    // Traefik polls these routes (several instances, every few seconds) and they log per request at
    // debug only (API.md §2.11): one shared child logger instead of a new pino child per request
    // (issue 11). Their lines carry the component, not the request id.
    const shared = new Map<string, FastifyBaseLogger>();
    scope.setChildLoggerFactory((logger, _bindings, options) => {
      const level = options.level ?? logger.level;
      let child = shared.get(level);
      if (!child) shared.set(level, (child = logger.child({ component: 'proxy-config' }, { level })));
      return child;
    });
    for (const prefix of PREFIXES)
      registerRoutes(scope.withTypeProvider<TypeBoxTypeProvider>(), app, provider, { served, polled }, prefix, targets);
  });
  await app.register(targetRoutes, { service: targets.service });
  // §4.19: what each Traefik runs, compared with the documents generated here
  await app.register(liveStatus);
  // Traefik's plain polls skip Fastify: same answer, a fraction of the CPU (fast-route.ts, issue 11)
  if (app.hasDecorator('fastRoutes')) {
    const fast = fastProviderRoute(polled, (ip, userAgent, etag, yaml, notModified) =>
      targets.pollers.seen('default', ip, userAgent, null, etag, yaml, notModified),
    );
    for (const prefix of PREFIXES) app.fastRoutes.add(prefix, 'provider', fast);
  }
}

type Served = () => { generation: Servable; stale: boolean } | null;

function registerRoutes(
  scope: RouteScope,
  app: FastifyInstance,
  provider: ConfigProvider,
  { served, polled }: { served: Served; polled: Served },
  prefix: string,
  targets: Targets,
): void {
  const hide = prefix !== '/api/proxy-config';
  const providerSchema = {
    hide,
    tags: ['proxy-config'],
    response: { 304: Type.Unsafe<undefined>(Type.Null()), 404: ErrorBody, 502: ErrorBody },
  };
  // A poll refused by the auth check (core/auth's onRequest hook: wrong or missing token) is counted
  // for its document, so the status shows a Traefik that polls but is refused (polls["401"]). An
  // onError hook runs on errors only: a served poll does no more work than before.
  const countRefused = (error: FastifyError, target: unknown, request: FastifyRequest): void => {
    if (error.statusCode === 401) recordRefusedPoll(targets, target, request);
  };
  // the 200 answer is bytes prepared per generation, not a schema's shape: only the request is typed
  scope.withTypeProvider<TypeBoxRequestTypeProvider>().get(
    prefix,
    {
      config: { auth: 'provider' },
      // the query is parsed, not validated yet, when onRequest refuses: recordRefusedPoll checks it
      onError(request, _reply, error, done) {
        countRefused(error, request.query.target, request);
        done();
      },
      // Traefik polls every few seconds: core/request-log.ts logs every poll at debug, whatever it is
      // answered, and ProviderAnswerLog (answer-log.ts) one line per change of answer
      schema: {
        ...providerSchema,
        summary: "Generated Traefik dynamic configuration (HTTP provider; `target`: that target's document)",
        querystring: ProviderQuery,
      },
      // not async: a synchronous handler saves a promise per request; the headers come precomputed per
      // generation and encoding (providerHeaders), so a request only picks bytes and header sets
    },
    function serveConfig(request, reply) {
      const { format, target } = request.query;
      if (target !== undefined) return serveTarget(targets, request, reply, target, format, isStale(app));
      const current = polled();
      if (!current) {
        recordUnavailablePoll(targets, 'default', request);
        throw proxyConfigErrors.neverProduced(app.upstream.lastError);
      }
      const { generation, stale } = current;
      const yaml = format ? format === 'yaml' : wantsYaml(request.headers.accept);
      const encoded = yaml ? generation.yaml : generation.json;
      const headers = providerHeaders(generation, encoded, yaml, stale);
      const notModified = matchesIfNoneMatch(request.headers['if-none-match'], encoded.etag);
      recordPoll(targets, 'default', request, encoded.etag, yaml, notModified);
      if (notModified) return reply.headers(headers.notModified).code(304).send();
      if (encoded.gzip && acceptsGzip(request.headers['accept-encoding']))
        return reply.headers(headers.gzip).send(encoded.gzip);
      return reply.headers(headers.plain).send(encoded.body);
    },
  );

  // a target's document (static routes such as /status win over this parametric one)
  scope.withTypeProvider<TypeBoxRequestTypeProvider>().get(
    `${prefix}/:target`,
    {
      config: { auth: 'provider' },
      onError(request, _reply, error, done) {
        countRefused(error, request.params.target, request);
        done();
      },
      schema: {
        ...providerSchema,
        summary: 'Generated Traefik dynamic configuration of one provider target',
        params: TargetParams,
        querystring: ProviderQuery,
      },
    },
    function serveTargetConfig(request, reply) {
      return serveTarget(targets, request, reply, request.params.target, request.query.format, isStale(app));
    },
  );

  scope.post(
    `${prefix}/invalidate`,
    {
      config: { auth: 'config' },
      schema: {
        hide,
        tags: ['proxy-config'],
        summary: 'Force an upstream fetch, discovery sync and regeneration',
        response: { 200: InvalidateResult, 502: ErrorBody },
      },
    },
    async () => {
      const before = provider.current()?.json.etag;
      const [sync] = await Promise.all([app.upstream.requestSync('forced'), app.traefikVersion.refresh()]);
      const generation = await provider.regenerate();
      if (!generation) throw proxyConfigErrors.neverProduced(sync.error ?? app.upstream.lastError);
      return {
        regenerated_at: app.now().toISOString(),
        etag: generation.json.etag.slice(1, -1),
        changed: before !== generation.json.etag,
        stale: isStale(app),
        upstream_error: sync.ok ? null : sync.error,
      };
    },
  );

  scope.get(
    `${prefix}/status`,
    {
      config: { auth: 'config' },
      schema: {
        hide,
        tags: ['proxy-config'],
        summary: 'State of the generated config and its upstream',
        response: { 200: Status, 503: ErrorBody },
      },
    },
    async () => {
      const status = statusOf(app, provider, served, targets);
      if (status.status === 'error')
        throw errors.unhealthy(
          `no configuration can be served: ${status.upstream.last_error ?? 'upstream never fetched'}`,
          status,
        );
      return status;
    },
  );
}

/**
 * Stale = the latest fetch of the active source failed (its last good answer is being used). In mode
 * `none` nothing is fetched: a failure of the source active before the switch no longer counts.
 */
function isStale(app: FastifyInstance): boolean {
  return app.upstream.stale && app.datasources.mode() !== 'none';
}

function statusOf(app: FastifyInstance, provider: ConfigProvider, served: Served, targets: Targets): StatusBody {
  const generation = provider.current();
  const saved = generation ? null : served();
  const active = app.datasources.active();
  const lastSync = active ? app.upstream.lastSync(active.name) : null;
  const dataDir = app.store.dataDir;
  const result = generation?.result;
  const body: StatusBody = {
    status: 'ok',
    mode: app.datasources.mode(),
    etag: generation ? generation.json.etag.slice(1, -1) : null,
    generated_at: generation?.generatedAt ?? null,
    stale: isStale(app),
    upstream: {
      source: active?.name ?? null,
      type: active?.source.type ?? null,
      url: active?.source.url ?? null,
      last_ok_at: app.upstream.lastOkAt,
      last_error: app.upstream.lastError,
      last_error_at: app.upstream.lastErrorAt,
      empty_streak: lastSync?.empty_streak ?? 0,
    },
    counts: result?.counts ?? { routers: 0, services: 0, middlewares: 0, patched_routers: 0 },
    // paths relative to the data dir: internal paths are never sent (API.md §2.4)
    invalid_files: app.store.invalidFiles().map((f) => ({ ...f, path: path.relative(dataDir, f.path) })),
    conflicts: result?.conflicts ?? [],
    dangling_references: [...(result?.dangling_references ?? []), ...targetDangling(targets)],
    schema_warnings: generation?.schemaWarnings ?? [],
    traefik_version: app.traefikVersion.view(),
    dropped_keys: generation?.dropped ?? [],
    targets: targetStatuses(targets, generation ?? saved?.generation ?? null, app.traefikVersion.current()),
  };
  if (!generation && saved) {
    // serving the last run's config until this run's first generation (issue 11)
    Object.assign(body, {
      status: 'starting',
      etag: saved.generation.json.etag.slice(1, -1),
      generated_at: saved.generation.generatedAt,
      stale: true,
    });
  } else if (!generation) body.status = 'error';
  else if (
    body.stale ||
    body.invalid_files.length ||
    body.conflicts.length ||
    body.dangling_references.length ||
    body.schema_warnings.length
  )
    body.status = 'degraded';
  return body;
}

export default fp(proxyConfig, {
  name: 'proxy-config',
  dependencies: ['datasource', 'middlewares', 'services', 'resources', 'mtls', 'events'],
});
