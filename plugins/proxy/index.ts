/**
 * The Proxy explorer group (API.md §4.7): read-only views of the Traefik API under /api/proxy,
 * cached 1 s per upstream URL with concurrent calls sharing one upstream request.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stringify } from 'lossless-json';
import { paginate } from '../../model/http.ts';
import { AnswerCache } from './answer-cache.ts';
import { proxyErrors, type PartError } from './errors.ts';
import { dataSchema, entrypointsSchema, listSchema, overviewSchema, versionSchema } from './schemas.ts';
import { LIST_KINDS, ProxyExplorer } from './service.ts';
import { selectTraefikSource } from './source-select.ts';
import { TraefikReader } from './traefik-reader.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The explorer's reader of the selected Traefik source, for groups that need Traefik's runtime view (plugin status, §4.6). */
    proxyExplorer: ProxyExplorer;
  }
}

export type { ProxyExplorer } from './service.ts';

/** API.md §2.10: explorer answers are cached 1 s. */
const CACHE_TTL_MS = 1000;

async function proxy(app: FastifyInstance): Promise<void> {
  const closing = new AbortController();
  const cache = new AnswerCache(CACHE_TTL_MS, () => app.now().getTime());
  const explorer = new ProxyExplorer({
    select: () => selectTraefikSource(app.datasources),
    reader: new TraefikReader(cache, closing.signal),
  });
  app.decorate('proxyExplorer', explorer);
  app.addHook('onClose', async () => {
    closing.abort();
    cache.clear();
  });
  await app.register(routes, { explorer });
}

/** 200, or 206 with a warning in the log when some parts failed (API.md §2.5). */
function sendPartial(request: FastifyRequest, reply: FastifyReply, body: { errors: PartError[] }): FastifyReply {
  if (body.errors.length === 0) return reply.send(body);
  request.log.warn({ failed: body.errors.map((error) => error.endpoint) }, 'Traefik answered only in part');
  return reply.code(206).send(body);
}

/** The HTTP routes, encapsulated so their serializer and hooks never leak. */
async function routes(parent: FastifyInstance, { explorer }: { explorer: ProxyExplorer }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  // Traefik objects leave as parsed: Traefik's key order kept, MaxInt64 priorities (BigInt) written
  // digit for digit (API.md §2.1); the compiled serializer would drop fields and reject BigInt
  scope.setSerializerCompiler(() => (data) => stringify(data) ?? 'null');
  const config = { auth: 'config' as const };

  scope.get('/api/proxy/overview', { config, schema: overviewSchema }, async () => explorer.overview());

  scope.get('/api/proxy/version', { config, schema: versionSchema }, async () => explorer.version());

  scope.get('/api/proxy/entrypoints', { config, schema: entrypointsSchema }, async (request, reply) =>
    paginate(request, reply, await explorer.entrypoints(), request.query),
  );

  for (const kind of LIST_KINDS) {
    scope.get(`/api/proxy/${kind}`, { config, schema: listSchema(kind) }, async (request, reply) => {
      const query = request.query;
      const filter = { search: query.search || undefined, provider: query.provider };
      const type = query.type ?? 'http';
      if (type !== 'all') return paginate(request, reply, await explorer.list(kind, type, filter), query);
      if (query.page !== undefined) throw proxyErrors.pagingWithAll('page');
      if (query.page_size !== undefined) throw proxyErrors.pagingWithAll('page_size');
      return sendPartial(request, reply, await explorer.listAll(kind, filter));
    });
  }

  scope.get('/api/proxy/data', { config, schema: dataSchema }, async (request, reply) =>
    sendPartial(request, reply, await explorer.data()),
  );
}

export default fp(proxy, {
  name: 'proxy',
  dependencies: ['datasource'],
  decorators: { fastify: ['now', 'datasources'] },
});
