/**
 * The Containers group (API.md §4.11): the Docker client as `app.docker`, the `docker` health probe
 * and the /api/container routes. Update jobs (POST /api/container/update) wait for the Jobs group.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { isTrue } from '../shared-schemas.ts';
import { DockerClient, dockerConfigured, dockerEndpoint, dockerOptions } from './docker-client.ts';
import { actionSchema, listSchema, updatesSchema, type ActionBodyType, type ContainerAction, type ListQueryType } from './schemas.ts';
import { ContainerService } from './service.ts';
import { StackMembership } from './stack.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Docker Engine client, built from `docker.host` / `docker.socket`. */
    docker: DockerClient;
  }
}

async function containers(app: FastifyInstance): Promise<void> {
  const { docker: dockerConfig, stack, containers: settings } = app.config;
  const docker = new DockerClient(dockerEndpoint(dockerConfig), dockerOptions(dockerConfig));
  app.decorate('docker', docker);
  app.addHook('onClose', async () => docker.close());
  app.health.register('docker', async () => ((await dockerConfigured(dockerConfig)) ? docker.ping(AbortSignal.timeout(3000)) : 'skipped'));

  const service = new ContainerService({
    docker,
    stack: new StackMembership(stack),
    stopTimeoutS: settings.stop_timeout_s,
    updatesTtlS: settings.updates_ttl_s,
    now: () => app.now(),
    log: app.log.child({ component: 'containers' }),
    notify: (change) => app.events.publish('container', change),
  });
  await app.register(routes, { service });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(scope: FastifyInstance, { service }: { service: ContainerService }): Promise<void> {
  const config = { auth: 'operations' as const };

  scope.get('/api/container/containers', { config, schema: listSchema }, async (request, reply) => {
    const query = request.query as ListQueryType;
    const list = await service.list(isTrue(query.all), isTrue(query.labels));
    reply.header('x-total-count', String(list.length));
    return list;
  });

  scope.post('/api/container/container/:action', { config, schema: actionSchema }, async (request) => {
    const { action } = request.params as { action: ContainerAction };
    return service.act(action, (request.body as ActionBodyType).container_name);
  });

  scope.get('/api/container/updates', { config, schema: updatesSchema }, async (request, reply) => {
    const list = await service.updates(isTrue((request.query as { refresh?: string }).refresh));
    reply.header('x-total-count', String(list.length));
    return list;
  });
}

export default fp(containers, { name: 'containers', dependencies: ['auth', 'health', 'events'], decorators: { fastify: ['config', 'now', 'health', 'events'] } });
