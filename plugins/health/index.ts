/**
 * GET /api/health: readiness (200 only from the app, once every route is served; the early handler
 * answers 503 `starting` before), with ?deep=true the dependency checks; GET /api/health/live:
 * liveness (API.md §4.1).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../core/errors/app-error.ts';
import { APP_VERSION } from '../../core/version.ts';
import { isTrue, ErrorBody } from '../../model/schemas.ts';
import { Health, HealthQuery, Liveness } from './schemas.ts';
import { HealthService } from './service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    health: HealthService;
  }
}

async function health(app: FastifyInstance): Promise<void> {
  const service = new HealthService(APP_VERSION, app.config.storage.data_dir);
  app.decorate('health', service);
  await app.register(routes, { service });
}

/** The HTTP routes, in their own scope. */
async function routes(parent: FastifyInstance, { service }: { service: HealthService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  scope.get(
    '/api/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        summary: 'Readiness (503 `starting` until every route is served); deep=true checks dependencies',
        querystring: HealthQuery,
        response: { 200: Health, 503: ErrorBody },
      },
    },
    async (request) => {
      const { deep } = request.query;
      if (!isTrue(deep)) return service.summary();
      const body = await service.deep();
      if (body.status === 'fail') {
        const failed = Object.entries(body.checks ?? {})
          .filter(([, c]) => c.status === 'fail')
          .map(([n]) => n);
        throw errors.unhealthy(`health check failed: ${failed.join(', ')}`, body);
      }
      return body;
    },
  );
  scope.get(
    '/api/health/live',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        summary: 'Liveness: 200 as soon as the process listens (`starting` while the app is built)',
        response: { 200: Liveness },
      },
    },
    async () => ({ status: 'ok' as const, version: APP_VERSION, uptime_s: service.summary().uptime_s }),
  );
}

export default fp(health, { name: 'health', dependencies: ['auth'] });
