/**
 * The Logs group (API.md §4.13): container log lines per stack service, the live WebSocket stream
 * and Traefik access-log statistics. Uses the Containers group's Docker client (`app.docker`).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { logErrors } from './errors.ts';
import { originAllowed } from './origin.ts';
import { linesSchema, statsSchema, streamSchema, type ServiceParamsType, type StreamQueryType } from './schemas.ts';
import { LogsService } from './service.ts';
import { LogStreamSession, type LogSocket, type StreamTarget } from './stream-session.ts';

async function logs(app: FastifyInstance): Promise<void> {
  const service = new LogsService({
    docker: app.docker,
    settings: app.config.logs,
    now: () => app.now(),
    log: app.log.child({ component: 'logs' }),
  });
  await app.register(routes, { service });
}

/** The HTTP and WebSocket routes, encapsulated so their hooks (and the WebSocket plugin's) never leak. */
async function routes(parent: FastifyInstance, { service }: { service: LogsService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'operations' as const };
  const sessions = new Set<LogStreamSession>();
  // server shutdown closes every stream with 1001, a hot reload's retired instance with 1012 (API.md §4.13)
  await scope.register(websocket, {
    preClose(this: FastifyInstance, done: () => void) {
      const restarting = scope.lifecycle.restarting;
      for (const session of sessions)
        session.stop(restarting ? 1012 : 1001, restarting ? 'service restart' : 'server shutdown');
      done();
    },
  } as never);

  scope.get('/api/logs/proxy/advanced', { config, schema: statsSchema }, async (request) =>
    service.stats(request.query),
  );

  scope.get('/api/logs/:service', { config, schema: linesSchema }, async (request, reply) => {
    const { service: name } = request.params;
    const lines = await service.lines(name, request.query);
    reply.header('x-total-count', String(lines.length));
    return lines;
  });

  // the WebSocket route's options are untyped for @fastify/websocket (`as never`), so its request is typed from the same schemas here
  type StreamRequest = FastifyRequest<{ Params: ServiceParamsType; Querystring: StreamQueryType }>;
  const targets = new WeakMap<FastifyRequest, StreamTarget>();
  scope.route({
    method: 'GET',
    url: '/api/logs/stream/:service',
    config,
    schema: streamSchema,
    // every refusal is an HTTP answer before the upgrade
    preHandler: async (request: StreamRequest) => {
      if (!request.ws) throw logErrors.websocketRequired();
      if (!originAllowed(request, scope.config.cors.origins))
        throw logErrors.originForbidden(String(request.headers.origin));
      targets.set(request, await service.target(request.params.service));
    },
    handler: async () => {
      throw logErrors.websocketRequired();
    },
    wsHandler: (socket: LogSocket, request: StreamRequest) => {
      const query = request.query;
      const stream = query.stream ?? 'all';
      const session = new LogStreamSession(socket, {
        docker: scope.docker,
        target: targets.get(request)!,
        tail: query.tail,
        stdout: stream !== 'stderr',
        stderr: stream !== 'stdout',
        bufferLines: scope.config.logs.ws_buffer_lines,
        log: request.log,
      });
      sessions.add(session);
      socket.on('close', () => sessions.delete(session));
      void session.start();
    },
  } as never);
}

export default fp(logs, {
  name: 'logs',
  dependencies: ['auth', 'container'],
  decorators: { fastify: ['config', 'now', 'docker'] },
});
