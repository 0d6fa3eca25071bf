/**
 * The Jobs group (API.md §4.14): the in-memory job runner as `app.jobs`, used by other groups to
 * run detached work (container updates), and the read-only routes GET /api/jobs and /api/jobs/:id.
 *
 * Shutdown: running jobs are asked to stop (an update rolls back what it changed) and waited for
 * up to SHUTDOWN_GRACE_MS, inside the server's 10 s grace; one still running then is marked failed.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { paginate } from '../../model/http.ts';
import { JobRunner } from './runner.ts';
import { getSchema, listSchema, type JobView } from './schemas.ts';

export type { JobContext, JobRunner, JobSpec, PlannedStep, StepHandle } from './runner.ts';
export type { JobView } from './schemas.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts and reports detached jobs. */
    jobs: JobRunner;
  }
}

/** Below core/server.ts's 10 s shutdown grace, so the job's end is logged before the process exits. */
export const SHUTDOWN_GRACE_MS = 8_000;

async function jobs(app: FastifyInstance): Promise<void> {
  const runner = new JobRunner({ now: () => app.now(), log: app.log.child({ component: 'jobs' }) });
  app.decorate('jobs', runner);
  runner.onChange((job: JobView) => app.events.publish('job', job));
  app.addHook('onClose', async () => runner.close(SHUTDOWN_GRACE_MS));
  await app.register(routes, { runner });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { runner }: { runner: JobRunner }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'operations' as const };

  scope.get('/api/jobs', { config, schema: listSchema }, async (request, reply) => {
    const query = request.query;
    return paginate(request, reply, runner.list({ kind: query.kind, status: query.status }), query);
  });

  scope.get('/api/jobs/:id', { config, schema: getSchema }, async (request) => runner.get(request.params.id));
}

export default fp(jobs, {
  name: 'jobs',
  dependencies: ['auth', 'events'],
  decorators: { fastify: ['config', 'now', 'events'] },
});
