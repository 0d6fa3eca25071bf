/**
 * The Containers group (API.md §4.11): the Docker client as `app.docker`, the `docker` health probe
 * and the /api/container routes, including update jobs (POST /api/container/update) that run on the
 * Jobs group's runner and take their pre-update backup through the backups group.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { isTrue } from '../../model/schemas.ts';
import { SHUTDOWN_GRACE_MS } from '../jobs/index.ts';
import { DockerClient, dockerConfigured, dockerEndpoint, dockerOptions } from './docker-client.ts';
import { actionSchema, listSchema, updateSchema, updatesSchema } from './schemas.ts';
import { ContainerService } from './service.ts';
import { StackMembership } from './stack.ts';
import { UpdateService } from './update/service.ts';
import { UpdateCheck } from './update-check.ts';
import { ImageUpdateNotices } from './update-notices.ts';
import { stackJobs } from './update/stack-jobs.ts';
import type { StackJobs } from './types.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Docker Engine client, built from `docker.host` / `docker.socket`. */
    docker: DockerClient;
    /** Jobs of other groups that recreate or restart stack containers as updates do (API.md §4.20 apply). */
    stackJobs: StackJobs;
  }
}

async function containers(app: FastifyInstance): Promise<void> {
  const { docker: dockerConfig, stack, containers: settings } = app.config;
  const docker = new DockerClient(dockerEndpoint(dockerConfig), dockerOptions(dockerConfig));
  app.decorate('docker', docker);
  app.addHook('onClose', async () => {
    // onClose hooks run in reverse registration order: this one runs before the jobs group's, and
    // a running update must roll back while the Docker client still works
    await app.jobs.close(SHUTDOWN_GRACE_MS);
    docker.close();
  });
  app.health.register('docker', async () =>
    (await dockerConfigured(dockerConfig)) ? docker.ping(AbortSignal.timeout(3000)) : 'skipped',
  );

  const membership = new StackMembership(stack);
  const updates = new UpdateService({
    docker,
    stack: membership,
    jobs: app.jobs,
    takeBackup: async (note) => (await app.backups.createPreUpdate(note)).id,
    stopTimeoutS: settings.stop_timeout_s,
    stableS: settings.update_stable_s,
    now: () => app.now(),
    log: app.log.child({ component: 'container-update' }),
  });
  app.decorate(
    'stackJobs',
    stackJobs({ updates, dockerConfig, stableS: settings.update_stable_s, now: () => app.now() }),
  );
  const notices = new ImageUpdateNotices(app.store, () => app.now());
  const service = new ContainerService({
    docker,
    stack: membership,
    stopTimeoutS: settings.stop_timeout_s,
    updatesTtlS: settings.updates_ttl_s,
    now: () => app.now(),
    log: app.log.child({ component: 'containers' }),
    notify: (change) => app.events.publish('container', change),
    onUpdateAvailable: ({ service, image, current_digest, latest_digest }) =>
      app.events.publish('image_update', { service, image, current_digest, latest_digest }),
    assertFree: (name) => updates.assertFree(name),
    notices,
    tells: () => app.cluster.isLeader(),
  });
  const check = new UpdateCheck({
    intervalMs: settings.updates_check_interval_s * 1000,
    leads: () => app.cluster.isLeader(),
    check: () => service.updates(false),
    log: app.log.child({ component: 'image-update-check' }),
  });
  app.addHook('onReady', async () => {
    await notices.load();
    check.start();
  });
  // registered after the hook above that closes the Docker client: runs before it
  app.addHook('onClose', async () => check.close());
  await app.register(routes, { service });
  await app.register(updateRoute, { updates });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { service }: { service: ContainerService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'operations' as const };

  scope.get('/api/container/containers', { config, schema: listSchema }, async (request, reply) => {
    const query = request.query;
    const list = await service.list(isTrue(query.all), isTrue(query.labels));
    reply.header('x-total-count', String(list.length));
    return list;
  });

  scope.post('/api/container/container/:action', { config, schema: actionSchema }, async (request) => {
    const { action } = request.params;
    return service.act(action, request.body.container_name);
  });

  scope.get('/api/container/updates', { config, schema: updatesSchema }, async (request, reply) => {
    const list = await service.updates(isTrue(request.query.refresh));
    reply.header('x-total-count', String(list.length));
    return list;
  });
}

/** POST /api/container/update, in its own scope beside the other container routes. */
async function updateRoute(parent: FastifyInstance, { updates }: { updates: UpdateService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  scope.post(
    '/api/container/update',
    { config: { auth: 'operations' }, schema: updateSchema },
    async (request, reply) => {
      const job = await updates.start(request.body);
      return reply.code(202).header('location', `/api/jobs/${job.id}`).send(job);
    },
  );
}

export { isDockerHttpError, type DockerClient } from './docker-client.ts';
export type { ConfigureCreate, PlannedUnit, ServiceMatch, StackJobs, StackJobSpec, StackJobTools } from './types.ts';

export default fp(containers, {
  name: 'container',
  dependencies: ['auth', 'health', 'events', 'jobs', 'backup'],
  decorators: { fastify: ['config', 'store', 'cluster', 'now', 'health', 'events', 'jobs', 'backups'] },
});
