/** GET /api/system/plugins: the third-party plugins and what became of them (API.md §4.16, §6). */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../../model/schemas.ts';
import { ExtPluginList } from './schemas.ts';

async function system(app: FastifyInstance): Promise<void> {
  app.get('/api/system/plugins', {
    config: { auth: 'operations' },
    schema: {
      tags: ['system'],
      summary: 'Third-party plugins: status, error, routes',
      response: { 200: ExtPluginList, 401: ErrorBody, 403: ErrorBody },
    },
  }, async (_request, reply) => {
    // The loader registers after the built-in groups, so its decorator is looked up per request.
    const registry = app.hasDecorator('extPlugins') ? app.extPlugins : undefined;
    reply.header('x-app-generation', String(registry?.generation ?? 0));
    return registry?.list() ?? [];
  });
}

export default fp(system, { name: 'system', dependencies: ['auth'] });
