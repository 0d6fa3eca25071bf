/**
 * The static configuration group (API.md §4.20): entry points for raw TCP/UDP resources under
 * /api/static/entrypoints — the Traefik static config's `entryPoints` and the compose file's
 * `services.gerbil.ports`, edited as YAML documents (comments and order kept, `.bak`, atomic) —
 * and POST /api/static/apply, the job that restarts Traefik and recreates Gerbil on the container
 * group's update machinery.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { staticConfigPath } from '../middlewares/index.ts';
import { warnSeededEnv } from '../../core/config/env-origins.ts';
import { StaticApply } from './apply.ts';
import {
  applySchema,
  deleteSchema,
  getSettingsSchema,
  listSchema,
  putSchema,
  putSettingsSchema,
  syncSchema,
} from './schemas.ts';
import { StaticService } from './service.ts';
import { settingOf } from '../../model/static-settings.ts';
import { describeSettings, updateSettings } from './settings.ts';

/** The compose file in effect: settings.yaml `compose_file` wins over `stack.compose_file` (STACK_COMPOSE_FILE). */
export function composeFilePath(app: FastifyInstance): string | null {
  return settingOf(app.settings.get(), app.config, 'compose_file').path;
}

async function staticGroup(app: FastifyInstance): Promise<void> {
  // STACK_COMPOSE_FILE / PROXY_PLUGINS_LOCAL_DIR are only defaults: a value set through the API wins
  warnSeededEnv(
    app.log.child({ component: 'static' }),
    app.config,
    (['compose_file', 'plugins_local_dir'] as const).map((name) => ({
      key: name === 'compose_file' ? 'stack.compose_file' : 'proxy.plugins_local_dir',
      envValue: name === 'compose_file' ? app.config.stack.compose_file : app.config.proxy.plugins_local_dir,
      fileValue: app.settings.get()[name] || null,
      file: 'settings.yaml',
      change: 'PUT /api/static/settings',
    })),
  );
  const service = new StaticService({
    staticPath: () => staticConfigPath(app),
    composePath: () => composeFilePath(app),
    served: () => app.proxyConfig.current()?.served ?? null,
    resources: () => app.resources.list(),
  });
  const apply = new StaticApply({
    jobs: app.stackJobs,
    entries: service,
    staticPath: () => staticConfigPath(app),
    composePath: () => composeFilePath(app),
    traefikSources: () => app.datasources.traefikSources(),
    log: app.log.child({ component: 'static-apply' }),
  });
  await app.register(routes, { service });
  await app.register(applyRoute, { apply });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { service }: { service: StaticService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'config' as const };

  scope.get('/api/static/entrypoints', { config, schema: listSchema }, async () => service.list());

  scope.put('/api/static/entrypoints/:name', { config, schema: putSchema }, async (request, reply) => {
    const entry = await service.put(request.params.name, request.body.address);
    return reply.header('x-restart-required', 'true').send(entry);
  });

  scope.delete('/api/static/entrypoints/:name', { config, schema: deleteSchema }, async (request, reply) => {
    await service.remove(request.params.name);
    return reply.header('x-restart-required', 'true').code(204).send();
  });

  // the group's files (docs/API.md "Static settings"); readers resolve them at each use, so no restart
  scope.get('/api/static/settings', { config, schema: getSettingsSchema }, async () =>
    describeSettings(parent.settings.get(), parent.config),
  );

  scope.put('/api/static/settings', { config, schema: putSettingsSchema }, async (request) =>
    updateSettings(parent.settings, parent.config, request.body ?? {}),
  );

  scope.post('/api/static/entrypoints/sync', { config, schema: syncSchema }, async (request, reply) => {
    const result = await service.sync(request.body?.dry_run === true);
    if (result.restart_required.length > 0 && !result.dry_run) reply.header('x-restart-required', 'true');
    return result;
  });
}

/** POST /api/static/apply: an operations route (class O) beside the config routes, in its own scope. */
async function applyRoute(parent: FastifyInstance, { apply }: { apply: StaticApply }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  scope.post('/api/static/apply', { config: { auth: 'operations' }, schema: applySchema }, async (request, reply) => {
    const job = await apply.start(request.body ?? {});
    return reply.code(202).header('location', `/api/jobs/${job.id}`).send(job);
  });
}

export default fp(staticGroup, {
  name: 'static',
  dependencies: ['middlewares', 'resources', 'proxy-config', 'datasource', 'jobs', 'container'],
  decorators: { fastify: ['settings', 'config', 'resources', 'proxyConfig', 'datasources', 'stackJobs'] },
});
