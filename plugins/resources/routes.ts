/** HTTP routes of /api/resources (API.md §4.4), registered in their own encapsulated scope. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ifMatchOf, ifNoneMatchHits, paginate, quoteEtag } from '../../model/http.ts';
import { aliasHook } from '../../model/aliases.ts';
import { installCodecs } from './codecs.ts';
import { CONFIG_KINDS, type ConfigBody, type ConfigKind } from '../../model/resource-config.ts';
import { resourceErrors } from './errors.ts';
import {
  assignSchema, bulkSchema, configSchema, deleteSchema, externalDeleteSchema, externalListSchema, externalUpsertSchema, getSchema,
  listSchema, serviceAssignSchema, serviceGetSchema, serviceRemoveSchema, unassignSchema,
  type AssignBodyType, type BulkAssignBodyType, type ExternalBodyType, type ResourceListFilter,
} from './schemas.ts';
import type { ResourceService } from './service.ts';
import type { ResourceView } from './views.ts';

const auth = { auth: 'config' as const };
const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;
const sendOne = (reply: FastifyReply, view: ResourceView) => reply.header('etag', quoteEtag(view.etag)).send(view);

/** The routes; `service` holds the logic. */
export async function resourceRoutes(scope: FastifyInstance, { service }: { service: ResourceService }): Promise<void> {
  installCodecs(scope);
  const base = '/api/resources/:id';

  scope.get('/api/resources', { config: auth, schema: listSchema }, async (request, reply) => {
    const query = request.query as ResourceListFilter;
    return paginate(request, reply, service.list(query), query);
  });

  scope.get(base, { config: auth, schema: getSchema }, async (request, reply) => {
    const view = service.get(idOf(request));
    if (!view) throw resourceErrors.notFound(idOf(request));
    if (ifNoneMatchHits(request.headers['if-none-match'], view.etag)) return reply.code(304).header('etag', quoteEtag(view.etag)).send();
    return sendOne(reply, view);
  });

  scope.delete(base, { config: auth, schema: deleteSchema }, async (request, reply) => {
    await service.remove(idOf(request), ifMatchOf(request));
    return reply.code(204).send();
  });

  // ---- middlewares of ours ----
  scope.post(`${base}/middlewares`, { config: auth, schema: assignSchema }, async (request, reply) =>
    sendOne(reply, await service.assignMiddleware(idOf(request), request.body as AssignBodyType, ifMatchOf(request))));

  scope.post(`${base}/middlewares/bulk`, { config: auth, schema: bulkSchema }, async (request, reply) =>
    sendOne(reply, await service.bulkAssign(idOf(request), request.body as BulkAssignBodyType, ifMatchOf(request))));

  scope.delete(`${base}/middlewares/:middlewareId`, { config: auth, schema: unassignSchema }, async (request, reply) => {
    await service.unassignMiddleware(idOf(request), (request.params as { middlewareId: string }).middlewareId, ifMatchOf(request));
    return reply.code(204).send();
  });

  // ---- external middleware references ----
  scope.get(`${base}/external-middlewares`, { config: auth, schema: externalListSchema }, async (request) => service.externals(idOf(request)));

  scope.post(`${base}/external-middlewares`, { config: auth, schema: externalUpsertSchema, preValidation: aliasHook('external') }, async (request, reply) =>
    sendOne(reply, await service.upsertExternal(idOf(request), request.body as ExternalBodyType, ifMatchOf(request))));

  scope.delete(`${base}/external-middlewares/:name`, { config: auth, schema: externalDeleteSchema }, async (request, reply) => {
    await service.removeExternal(idOf(request), (request.params as { name: string }).name, ifMatchOf(request));
    return reply.code(204).send();
  });

  // ---- service ----
  scope.get(`${base}/service`, { config: auth, schema: serviceGetSchema }, async (request) => service.serviceAssignment(idOf(request)));

  scope.post(`${base}/service`, { config: auth, schema: serviceAssignSchema }, async (request, reply) =>
    sendOne(reply, await service.assignService(idOf(request), (request.body as { service_id: string }).service_id, ifMatchOf(request))));

  scope.delete(`${base}/service`, { config: auth, schema: serviceRemoveSchema }, async (request, reply) => {
    await service.removeService(idOf(request), ifMatchOf(request));
    return reply.code(204).send();
  });

  // ---- config sub-objects: one route per kind, each with its schema and aliases ----
  for (const kind of CONFIG_KINDS) {
    scope.put(`${base}/config/${kind}`, { config: auth, schema: configSchema(kind), preValidation: aliasHook(kind) }, async (request, reply) =>
      sendOne(reply, await service.putConfig(kind as ConfigKind, idOf(request), request.body as ConfigBody<ConfigKind>, ifMatchOf(request))));
  }
}
