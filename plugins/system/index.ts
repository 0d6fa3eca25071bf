/**
 * GET /api/system/plugins: the third-party plugins and what became of them (API.md §4.16, §6);
 * GET /api/system/cluster: this node's view of the cluster (docs/API.md "Cluster").
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../../model/schemas.ts';
import { ClusterStatus, ExtPluginList } from './schemas.ts';

async function system(app: FastifyInstance): Promise<void> {
  await app.register(routes);
}

/** The HTTP routes, in their own scope. */
async function routes(parent: FastifyInstance): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  scope.get(
    '/api/system/plugins',
    {
      config: { auth: 'operations' },
      schema: {
        tags: ['system'],
        summary: 'Third-party plugins: status, error, routes',
        response: { 200: ExtPluginList, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (_request, reply) => {
      // The loader registers after the built-in groups, so its decorator is looked up per request.
      const registry = scope.hasDecorator('extPlugins') ? scope.extPlugins : undefined;
      reply.header('x-app-generation', String(registry?.generation ?? 0));
      return registry?.list() ?? [];
    },
  );
  scope.get(
    '/api/system/cluster',
    {
      config: { auth: 'operations' },
      schema: {
        tags: ['system'],
        summary: 'Cluster mode: this node, the leader, etcd reachability, the applied revision',
        response: { 200: ClusterStatus, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async () => scope.cluster.status(),
  );
}

export default fp(system, { name: 'system', dependencies: ['auth'] });
