/**
 * The services group (API.md §4.3): decorates `app.services` (the manager, with the reference
 * registry) and `app.servicesView`, seeds templates, and serves /api/services in its own scope.
 */
import path from 'node:path';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import { DEFAULT_TEMPLATES_DIR, seedTemplates } from '../middlewares/index.ts';
import { DEFAULT_TRAEFIK_SCHEMA_PATH, TraefikSchema } from '../../model/traefik-schema.ts';
import { ifMatchOf, ifNoneMatchHits, paginate, quoteEtag } from '../../model/http.ts';
import { serviceErrors } from './errors.ts';
import {
  createSchema,
  deleteSchema,
  getSchema,
  listSchema,
  replaceSchema,
  ServiceCreate,
  ServiceFile,
  type ServiceData,
  type ServiceView,
} from './schemas.ts';
import { ServiceManager, type ServiceTemplate } from './service.ts';

export type { ServiceView } from './schemas.ts';
export type { ServiceManager } from './service.ts';
export { serviceReferenceSlots, type ServiceReferenceSlot } from './validate.ts';

/** Read-only copies of services as the API shows them, for third-party plugins (API.md §6 `core`). */
export interface ServicesView {
  list(): ServiceView[];
  get(id: string): ServiceView | undefined;
}

export interface ServicesOptions extends GroupOptions {
  /** Traefik JSON Schema file (default: config/schemas/traefik-v3-file-provider.json). */
  traefikSchemaPath?: string;
  /** Directory holding services.yaml (default: config/templates). */
  templatesDir?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: ServiceManager;
    servicesView: ServicesView;
  }
}

async function services(app: FastifyInstance, options: ServicesOptions): Promise<void> {
  const manager = new ServiceManager({
    schema: TraefikSchema.shared(options.traefikSchemaPath ?? DEFAULT_TRAEFIK_SCHEMA_PATH),
    upstream: app.upstream,
    allowUnknown: app.config.validation.allow_unknown_traefik_fields,
    dir: path.join(app.store.dataDir, 'services'),
    now: () => app.now(),
    // the proxy-config group sets it up later; read at each view
    traefikVersion: () => (app.hasDecorator('traefikVersion') ? app.traefikVersion.current() : null),
  });
  manager.attach(
    await app.store.collection<ServiceData>({
      name: 'services',
      schema: ServiceFile,
      check: (id, data) => manager.checkFile(id, data),
      normalize: (data) => ({
        ...data,
        protocol: data.protocol ?? 'http',
        description: data.description ?? '',
        source: data.source ?? 'manual',
      }),
    }),
  );
  app.decorate('services', manager);
  app.decorate('servicesView', {
    list: () => structuredClone(manager.list()),
    get: (id: string) => structuredClone(manager.get(id)),
  } satisfies ServicesView);

  if (app.config.templates.seed) {
    await seedTemplates<ServiceTemplate>({
      dir: options.templatesDir ?? DEFAULT_TEMPLATES_DIR,
      key: 'services',
      schema: { ...ServiceCreate, required: [...(ServiceCreate.required ?? []), 'id'] },
      settings: app.settings,
      log: app.log,
      seed: (template) => manager.seed(template),
    });
  }
  await app.register(routes, { manager });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { manager }: { manager: ServiceManager }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const auth = { auth: 'config' as const };
  const sendOne = (reply: FastifyReply, view: ServiceView, status = 200) =>
    reply.code(status).header('etag', quoteEtag(view.etag)).send(view);

  scope.get('/api/services', { config: auth, schema: listSchema }, async (request, reply) => {
    const query = request.query;
    return paginate(request, reply, manager.list(query), query);
  });

  scope.post('/api/services', { config: auth, schema: createSchema }, async (request, reply) => {
    const view = await manager.create(request.body);
    reply.header('location', `/api/services/${view.id}`);
    return sendOne(reply, view, 201);
  });

  scope.get('/api/services/:id', { config: auth, schema: getSchema }, async (request, reply) => {
    const { id } = request.params;
    const view = manager.get(id);
    if (!view) throw serviceErrors.notFound(id);
    if (ifNoneMatchHits(request.headers['if-none-match'], view.etag))
      return reply.header('etag', quoteEtag(view.etag)).code(304).send();
    return sendOne(reply, view);
  });

  scope.put('/api/services/:id', { config: auth, schema: replaceSchema }, async (request, reply) => {
    const { id } = request.params;
    return sendOne(reply, await manager.replace(id, request.body, ifMatchOf(request)));
  });

  scope.delete('/api/services/:id', { config: auth, schema: deleteSchema }, async (request, reply) => {
    const { id } = request.params;
    await manager.remove(id, { ifMatch: ifMatchOf(request) });
    return reply.code(204).send();
  });
}

export default fp(services, { name: 'services', dependencies: ['datasource', 'middlewares'] });
