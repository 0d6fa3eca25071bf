/**
 * The data source group (API.md §4.5): datasources.yaml (seeded on first start), the `app.datasources`
 * service, the shared `app.upstream` state, the `datasource` health check and /api/datasource routes.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppConfig } from '../../core/config/schema.ts';
import { warnSeededEnv, type SeededSetting } from '../../core/config/env-origins.ts';
import { ifMatchOf, ifNoneMatchHits, paginate, quoteEtag } from '../../model/http.ts';
import { datasourceErrors } from './errors.ts';
import {
  DataSourcesFileSchema,
  deleteSchema,
  getActiveSchema,
  getSchema,
  listSchema,
  putSchema,
  setActiveSchema,
  testSchema,
  DEFAULT_POLL_INTERVAL_S,
  DEFAULT_TIMEOUT_MS,
  type DataSourcesFile,
  type DataSourceView,
} from './schemas.ts';
import { DataSourceService } from './service.ts';
import { normalizeFile } from './source-input.ts';
import { UpstreamState } from '../../model/upstream-state.ts';

export type { ActiveDataSource, DataSourceMode, DataSourceRegistry, DataSourceService } from './service.ts';
export { NO_DATA_SOURCE } from './service.ts';
export type { DataSourceView } from './schemas.ts';
export {
  fetchPangolinConfig,
  fetchTraefikList,
  fetchTraefikObject,
  fetchTraefikRouters,
  fetchTraefikServices,
  type UpstreamSource,
} from './upstream-client.ts';

declare module 'fastify' {
  interface FastifyInstance {
    upstream: UpstreamState;
    datasources: DataSourceService;
  }
}

/** Deep health checks give each probe 3 s (API.md §4.1); ours stops its requests then too. */
const HEALTH_PROBE_MS = 3000;

/** Content of a first-start datasources.yaml: `pangolin` and `traefik` from the configuration (API.md §4.5). */
function seedFile(config: AppConfig['datasources'], now: Date): DataSourcesFile {
  const at = now.toISOString();
  const source = (type: 'pangolin' | 'traefik', url: string) => ({
    type,
    url: url.replace(/\/+$/, ''),
    skip_tls_verify: false,
    basic_auth: null,
    poll_interval_s: DEFAULT_POLL_INTERVAL_S,
    timeout_ms: DEFAULT_TIMEOUT_MS,
    created_at: at,
    updated_at: at,
  });
  return {
    active: config.active,
    sources: { pangolin: source('pangolin', config.pangolin_url), traefik: source('traefik', config.traefik_url) },
  };
}

/** The settings that seeded datasources.yaml, against what the file holds now (API.md §2.11). */
function seededSettings(config: AppConfig['datasources'], file: DataSourcesFile): SeededSetting[] {
  const url = (name: 'pangolin' | 'traefik', key: string, value: string): SeededSetting => ({
    key,
    envValue: value.replace(/\/+$/, ''),
    fileValue: file.sources[name]?.url ?? null,
    file: 'datasources.yaml',
    change: `PUT /api/datasource/${name}`,
  });
  return [
    url('pangolin', 'datasources.pangolin_url', config.pangolin_url),
    url('traefik', 'datasources.traefik_url', config.traefik_url),
    {
      key: 'datasources.active',
      envValue: config.active,
      fileValue: file.active,
      file: 'datasources.yaml',
      change: 'PUT /api/datasource/active',
    },
  ];
}

async function datasource(app: FastifyInstance): Promise<void> {
  app.decorate('upstream', new UpstreamState((change) => app.events.publish('upstream', change)));
  const log = app.log.child({ component: 'datasource' });
  const document = await app.store.document<DataSourcesFile>({
    path: 'datasources.yaml',
    schema: DataSourcesFileSchema,
    // also what stays in effect while a broken file has never been valid (nothing is written then)
    initial: () => seedFile(app.config.datasources, app.now()),
    normalize: normalizeFile,
    fileMode: 0o600,
  });
  // the environment only seeds: an existing file, even an invalid one, is never overwritten
  if (!document.exists() && document.invalidFiles().length === 0) {
    await document.update(() => seedFile(app.config.datasources, app.now()));
    log.info(
      { file: document.path, active: app.config.datasources.active },
      'created datasources.yaml from the configuration',
    );
  } else if (document.exists()) {
    // the environment only seeds: say so when it asks for something the file does not hold
    warnSeededEnv(log, app.config, seededSettings(app.config.datasources, document.get()));
  }

  const service = new DataSourceService({ document, upstream: app.upstream, now: () => app.now(), log });
  app.decorate('datasources', service);
  app.addHook('onClose', async () => service.close());
  app.health.register('datasource', () => service.probeActive(AbortSignal.timeout(HEALTH_PROBE_MS)));
  await app.register(routes, { service });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { service }: { service: DataSourceService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const auth = { auth: 'config' as const };
  const sendOne = (reply: FastifyReply, view: DataSourceView, status = 200) =>
    reply.code(status).header('etag', quoteEtag(view.etag)).send(view);
  const sendCached = (
    request: { headers: Record<string, string | string[] | undefined> },
    reply: FastifyReply,
    view: DataSourceView,
  ) =>
    ifNoneMatchHits(request.headers['if-none-match'], view.etag)
      ? reply.header('etag', quoteEtag(view.etag)).code(304).send()
      : sendOne(reply, view);

  scope.get('/api/datasource', { config: auth, schema: listSchema }, async (request, reply) =>
    paginate(request, reply, service.list(), request.query),
  );

  scope.get('/api/datasource/active', { config: auth, schema: getActiveSchema }, async (request, reply) =>
    sendCached(request, reply, service.activeView()),
  );

  scope.put('/api/datasource/active', { config: auth, schema: setActiveSchema }, async (request, reply) => {
    const view = await service.setActive(request.body.name);
    // answered at once; the outcome shows in last_sync and the config status
    void scope.upstream
      .requestSync('source_changed')
      .catch((err: unknown) => request.log.error({ err }, 'sync after switching the data source failed'));
    // mode none (API.md §4.24): there is no source to answer with
    if (!view) return reply.code(204).send();
    return sendOne(reply, view);
  });

  // not in the endpoint table, but the Location of a created source must lead somewhere
  scope.get('/api/datasource/:name', { config: auth, schema: getSchema }, async (request, reply) => {
    const { name } = request.params;
    const view = service.get(name);
    if (!view) throw datasourceErrors.notFound(name);
    return sendCached(request, reply, view);
  });

  scope.put('/api/datasource/:name', { config: auth, schema: putSchema }, async (request, reply) => {
    const { name } = request.params;
    const { view, created } = await service.put(name, request.body, ifMatchOf(request));
    if (created) reply.header('location', `/api/datasource/${name}`);
    return sendOne(reply, view, created ? 201 : 200);
  });

  scope.delete('/api/datasource/:name', { config: auth, schema: deleteSchema }, async (request, reply) => {
    const { name } = request.params;
    await service.remove(name, ifMatchOf(request));
    return reply.code(204).send();
  });

  scope.post('/api/datasource/:name/test', { config: auth, schema: testSchema }, async (request) => {
    const { name } = request.params;
    return service.test(name, request.body);
  });
}

export default fp(datasource, {
  name: 'datasource',
  dependencies: ['auth', 'health', 'events'],
  decorators: { fastify: ['config', 'store', 'now', 'health', 'events'] },
});
