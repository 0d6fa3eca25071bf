/**
 * The Plugins group (API.md §4.6): Traefik plugins in the static configuration under /api/plugins —
 * list with status and users, catalogue, usage, install/remove (YAML document edits) and the path.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { staticConfigPath } from '../middlewares/index.ts';
import { StaticConfigReader } from '../../model/static-config.ts';
import { settingOf } from '../../model/static-settings.ts';
import { isTrue } from '../../model/schemas.ts';
import { paginate } from '../../model/http.ts';
import { PluginCatalogue } from './catalogue.ts';
import { checkNewPath, configPathOf, describePath } from './config-path.ts';
import {
  catalogueSchema,
  configPathSchema,
  installSchema,
  listSchema,
  putConfigPathSchema,
  removeSchema,
  unvendorSchema,
  usageSchema,
  vendorSchema,
} from './schemas.ts';
import { PluginService } from './service.ts';
import { UPLOAD_LIMIT, VendoredSchema, type VendoredFile } from './vendor.ts';
import { warnSeededEnv } from '../../core/config/env-origins.ts';

async function plugins(app: FastifyInstance): Promise<void> {
  const log = app.log.child({ component: 'plugins' });
  // PROXY_STATIC_CONFIG is only the default: a path set through the API (settings.yaml) wins
  warnSeededEnv(log, app.config, [
    {
      key: 'proxy.static_config_path',
      envValue: app.config.proxy.static_config_path,
      fileValue: app.settings.get().proxy_static_config_path || null,
      file: 'settings.yaml',
      change: 'PUT /api/plugins/configpath',
    },
  ]);
  const service = new PluginService({
    currentPath: () => staticConfigPath(app),
    staticConfig: new StaticConfigReader(() => staticConfigPath(app)),
    middlewares: app.middlewares,
    explorer: app.proxyExplorer,
    catalogue: new PluginCatalogue({
      url: app.config.plugins_catalogue.url,
      ttlS: app.config.plugins_catalogue.ttl_s,
      store: app.store,
      now: app.now,
      log,
    }),
    // the mTLS plugin check and the generated config read the static config: regenerate
    onChanged: () => app.proxyConfig.invalidate(),
    log,
    vendor: {
      localDir: () => settingOf(app.settings.get(), app.config, 'plugins_local_dir').path,
      registryUrl: () => app.config.plugins_registry.url,
      records: await app.store.document<VendoredFile>({
        path: 'plugins-vendored.yaml',
        schema: VendoredSchema,
        initial: () => ({ plugins: {} }),
      }),
      now: app.now,
    },
  });
  await app.register(routes, { service });
}

/** Every change needs a Traefik restart (plugins load only at startup). */
const restart = (reply: FastifyReply): FastifyReply => reply.header('x-restart-required', 'true');

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { service }: { service: PluginService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const app = scope;
  const config = { auth: 'config' as const };

  scope.get('/api/plugins', { config, schema: listSchema }, async (request, reply) =>
    paginate(request, reply, await service.list(), {}),
  );

  scope.get('/api/plugins/catalogue', { config, schema: catalogueSchema }, async (request, reply) => {
    const query = request.query;
    const { entries, stale } = await service.catalogue(query.q, isTrue(query.refresh));
    if (stale) reply.header('x-catalogue-stale', 'true');
    return paginate(request, reply, entries, query);
  });

  scope.get('/api/plugins/:name/usage', { config, schema: usageSchema }, async (request) =>
    service.usage(request.params.name),
  );

  scope.post('/api/plugins/install', { config, schema: installSchema }, async (request, reply) => {
    const { result, created } = await service.install(request.body);
    return restart(reply)
      .code(created ? 201 : 200)
      .send(result);
  });

  scope.delete('/api/plugins/remove', { config, schema: removeSchema }, async (request, reply) => {
    const body = request.body ?? {};
    const { key } = request.query;
    await service.remove(key ? { key } : body);
    return restart(reply).code(204).send();
  });

  // vendoring takes the plugin's zip as is (API.md §4.20: ≤ 20 MiB)
  scope.addContentTypeParser('application/zip', { parseAs: 'buffer', bodyLimit: UPLOAD_LIMIT }, (_r, body, done) =>
    done(null, body),
  );

  scope.post(
    '/api/plugins/:key/vendor',
    { config, schema: vendorSchema, bodyLimit: UPLOAD_LIMIT },
    async (request, reply) => {
      const upload = Buffer.isBuffer(request.body) && request.body.length > 0 ? request.body : undefined;
      return restart(reply).send(await service.vendor(request.params.key, upload));
    },
  );

  scope.delete('/api/plugins/:key/vendor', { config, schema: unvendorSchema }, async (request, reply) =>
    restart(reply).send(await service.unvendor(request.params.key)),
  );

  scope.get('/api/plugins/configpath', { config, schema: configPathSchema }, async () =>
    describePath(configPathOf(app.settings, app.config.proxy.static_config_path)),
  );

  scope.put('/api/plugins/configpath', { config, schema: putConfigPathSchema }, async (_request, reply) => {
    const next = checkNewPath(_request.body.path);
    await app.settings.update((current) => ({ ...current, proxy_static_config_path: next }));
    app.proxyConfig.invalidate();
    return restart(reply).send(describePath(configPathOf(app.settings, app.config.proxy.static_config_path)));
  });
}

export default fp(plugins, {
  name: 'plugins',
  dependencies: ['middlewares', 'proxy', 'proxy-config'],
  decorators: { fastify: ['store', 'settings', 'config', 'now', 'middlewares', 'proxyExplorer', 'proxyConfig'] },
});
