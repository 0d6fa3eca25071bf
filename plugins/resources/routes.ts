/** HTTP routes of /api/resources (API.md §4.4), registered in their own encapsulated scope. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ifMatchOf, ifNoneMatchHits, paginate, quoteEtag } from '../../model/http.ts';
import { aliasHook } from '../../model/aliases.ts';
import { installCodecs } from './codecs.ts';
import { CONFIG_KINDS } from '../../model/resource-config.ts';
import { resourceErrors } from './errors.ts';
import {
  assignSchema,
  bulkSchema,
  configSchema,
  createSchema,
  deleteSchema,
  externalDeleteSchema,
  externalListSchema,
  externalUpsertSchema,
  getSchema,
  listSchema,
  replaceSchema,
  serviceAssignSchema,
  serviceGetSchema,
  serviceRemoveSchema,
  unassignSchema,
} from './schemas.ts';
import type { ResourceService } from './service.ts';
import type { LocalWrites } from './local-writes.ts';
import type { ResourceView } from './views.ts';

const auth = { auth: 'config' as const };
const sendOne = (reply: FastifyReply, view: ResourceView) => reply.header('etag', quoteEtag(view.etag)).send(view);

/** The routes; `service` holds the logic. */
export async function resourceRoutes(
  parent: FastifyInstance,
  { service, local }: { service: ResourceService; local: LocalWrites },
): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  installCodecs(scope);
  const base = '/api/resources/:id';

  scope.get('/api/resources', { config: auth, schema: listSchema }, async (request, reply) => {
    return paginate(request, reply, service.list(request.query), request.query);
  });

  scope.get(base, { config: auth, schema: getSchema }, async (request, reply) => {
    const view = service.get(request.params.id);
    if (!view) throw resourceErrors.notFound(request.params.id);
    if (ifNoneMatchHits(request.headers['if-none-match'], view.etag))
      return reply.header('etag', quoteEtag(view.etag)).code(304).send();
    return sendOne(reply, view);
  });

  // ---- own resources (API.md §4.24) ----
  scope.post('/api/resources', { config: auth, schema: createSchema }, async (request, reply) => {
    const view = await local.create(request.body);
    reply.header('location', `/api/resources/${view.id}`);
    return sendOne(reply.code(201), view);
  });

  scope.put(base, { config: auth, schema: replaceSchema }, async (request, reply) =>
    sendOne(reply, await local.replace(request.params.id, request.body, ifMatchOf(request))),
  );

  scope.delete(base, { config: auth, schema: deleteSchema }, async (request, reply) => {
    await local.remove(request.params.id, ifMatchOf(request));
    return reply.code(204).send();
  });

  // ---- middlewares of ours ----
  scope.post(`${base}/middlewares`, { config: auth, schema: assignSchema }, async (request, reply) =>
    sendOne(reply, await service.assignMiddleware(request.params.id, request.body, ifMatchOf(request))),
  );

  scope.post(`${base}/middlewares/bulk`, { config: auth, schema: bulkSchema }, async (request, reply) =>
    sendOne(reply, await service.bulkAssign(request.params.id, request.body, ifMatchOf(request))),
  );

  scope.delete(
    `${base}/middlewares/:middlewareId`,
    { config: auth, schema: unassignSchema },
    async (request, reply) => {
      await service.unassignMiddleware(request.params.id, request.params.middlewareId, ifMatchOf(request));
      return reply.code(204).send();
    },
  );

  // ---- external middleware references ----
  scope.get(`${base}/external-middlewares`, { config: auth, schema: externalListSchema }, async (request) =>
    service.externals(request.params.id),
  );

  scope.post(
    `${base}/external-middlewares`,
    { config: auth, schema: externalUpsertSchema, preValidation: aliasHook('external') },
    async (request, reply) =>
      sendOne(reply, await service.upsertExternal(request.params.id, request.body, ifMatchOf(request))),
  );

  scope.delete(
    `${base}/external-middlewares/:name`,
    { config: auth, schema: externalDeleteSchema },
    async (request, reply) => {
      await service.removeExternal(request.params.id, request.params.name, ifMatchOf(request));
      return reply.code(204).send();
    },
  );

  // ---- service ----
  scope.get(`${base}/service`, { config: auth, schema: serviceGetSchema }, async (request) =>
    service.serviceAssignment(request.params.id),
  );

  scope.post(`${base}/service`, { config: auth, schema: serviceAssignSchema }, async (request, reply) =>
    sendOne(reply, await service.assignService(request.params.id, request.body.service_id, ifMatchOf(request))),
  );

  scope.delete(`${base}/service`, { config: auth, schema: serviceRemoveSchema }, async (request, reply) => {
    await service.removeService(request.params.id, ifMatchOf(request));
    return reply.code(204).send();
  });

  // ---- config sub-objects: one route per kind, each with its schema and aliases ----
  for (const kind of CONFIG_KINDS) {
    scope.put(
      `${base}/config/${kind}`,
      { config: auth, schema: configSchema(kind), preValidation: aliasHook(kind) },
      async (request, reply) =>
        sendOne(reply, await service.putConfig(kind, request.params.id, request.body, ifMatchOf(request))),
    );
  }
}
