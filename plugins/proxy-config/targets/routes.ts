/** CRUD routes of provider targets under /api/proxy-config/targets (like /api/middlewares). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ifMatchOf, ifNoneMatchHits, paginate, quoteEtag } from '../../../model/http.ts';
import { targetErrors } from './errors.ts';
import { createSchema, deleteSchema, getSchema, listSchema, replaceSchema, type TargetView } from './schemas.ts';
import type { TargetService } from './service.ts';

const BASE = '/api/proxy-config/targets';

export async function targetRoutes(app: FastifyInstance, { service }: { service: TargetService }): Promise<void> {
  const scope = app.withTypeProvider<TypeBoxTypeProvider>();
  const auth = { auth: 'config' as const };
  const sendOne = (reply: FastifyReply, view: TargetView, status = 200) =>
    reply.code(status).header('etag', quoteEtag(view.etag)).send(view);

  scope.get(BASE, { config: auth, schema: listSchema }, async (request, reply) => {
    return paginate(request, reply, service.list(), request.query);
  });

  scope.post(BASE, { config: auth, schema: createSchema }, async (request, reply) => {
    const view = await service.create(request.body);
    reply.header('location', `${BASE}/${view.id}`);
    return sendOne(reply, view, 201);
  });

  scope.get(`${BASE}/:id`, { config: auth, schema: getSchema }, async (request, reply) => {
    const { id } = request.params;
    const view = service.get(id);
    if (!view) throw targetErrors.notFound(id);
    if (ifNoneMatchHits(request.headers['if-none-match'], view.etag))
      return reply.header('etag', quoteEtag(view.etag)).code(304).send();
    return sendOne(reply, view);
  });

  scope.put(`${BASE}/:id`, { config: auth, schema: replaceSchema }, async (request, reply) => {
    return sendOne(reply, await service.replace(request.params.id, request.body, ifMatchOf(request)));
  });

  scope.delete(`${BASE}/:id`, { config: auth, schema: deleteSchema }, async (request, reply) => {
    await service.remove(request.params.id, ifMatchOf(request));
    return reply.code(204).send();
  });
}
