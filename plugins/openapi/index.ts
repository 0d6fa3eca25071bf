/**
 * OpenAPI 3 document generated from the TypeBox route schemas (@fastify/swagger) and Swagger UI at
 * /api/docs (@fastify/swagger-ui): libraries, so the document always follows the routes (API.md §4.16).
 */
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { APP_VERSION } from '../../core/version.ts';

async function openapi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Stack Manager API',
        version: APP_VERSION,
        description: 'Manages a Traefik v3 + CrowdSec + Pangolin edge stack. Contract: docs/API.md.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  // Registered as a child so its routes get the `config` access class without URL matching.
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object), auth: 'config' };
      route.schema = { ...route.schema, hide: true };
    });
    await scope.register(swaggerUi, { routePrefix: '/api/docs' });
    scope.get('/api/openapi.json', async () => app.swagger());
  });
}

export default fp(openapi, { name: 'openapi' });
