/** STUB (routes and poller being built): the data source group; decorates app.upstream. */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { UpstreamState } from './state.ts';

declare module 'fastify' {
  interface FastifyInstance {
    upstream: UpstreamState;
  }
}

async function datasource(app: FastifyInstance): Promise<void> {
  app.decorate('upstream', new UpstreamState());
}

export default fp(datasource, { name: 'datasource', dependencies: ['auth'] });
