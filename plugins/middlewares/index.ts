/**
 * The middlewares group (API.md §4.2): decorates `app.middlewares` (the service, with the reference
 * registry) and `app.middlewaresView`, seeds templates, and serves /api/middlewares in its own scope.
 */
import path from 'node:path';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import { ifMatchOf, ifNoneMatchHits, paginate, quoteEtag } from '../../model/http.ts';
import { isTrue } from '../../model/schemas.ts';
import { middlewareErrors } from './errors.ts';
import {
  createSchema,
  deleteSchema,
  getSchema,
  listSchema,
  MiddlewareCreate,
  MiddlewareFile,
  replaceSchema,
  type MiddlewareData,
  type MiddlewareView,
} from './schemas.ts';
import { MiddlewareService, type MiddlewareTemplate } from './service.ts';
import { StaticConfigReader } from '../../model/static-config.ts';
import { DEFAULT_TEMPLATES_DIR, seedTemplates } from './templates.ts';
import { DEFAULT_TRAEFIK_SCHEMA_PATH, TraefikSchema } from '../../model/traefik-schema.ts';

export type { MiddlewareView } from './schemas.ts';
export type { MiddlewareService } from './service.ts';
export type { ConfigOutcome } from './validate.ts';
export { DEFAULT_TEMPLATES_DIR, seedTemplates } from './templates.ts';

/** Read-only copies of middlewares as the API shows them, for third-party plugins (API.md §6 `core`). */
export interface MiddlewaresView {
  list(): MiddlewareView[];
  get(id: string): MiddlewareView | undefined;
}

export interface MiddlewaresOptions extends GroupOptions {
  /** Traefik JSON Schema file (default: config/schemas/traefik-v3-file-provider.json). */
  traefikSchemaPath?: string;
  /** Directory holding middlewares.yaml (default: config/templates). */
  templatesDir?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    middlewares: MiddlewareService;
    middlewaresView: MiddlewaresView;
  }
}

/** Path of the Traefik static config in effect: settings.yaml wins over `proxy.static_config_path`. */
export function staticConfigPath(app: FastifyInstance): string | null {
  return app.settings.get().proxy_static_config_path || app.config.proxy.static_config_path || null;
}

async function middlewares(app: FastifyInstance, options: MiddlewaresOptions): Promise<void> {
  const service = new MiddlewareService({
    schema: TraefikSchema.shared(options.traefikSchemaPath ?? DEFAULT_TRAEFIK_SCHEMA_PATH),
    staticConfig: new StaticConfigReader(() => staticConfigPath(app)),
    upstream: app.upstream,
    allowUnknown: app.config.validation.allow_unknown_traefik_fields,
    dir: path.join(app.store.dataDir, 'middlewares'),
    // the proxy-config group sets it up later; read at each view
    traefikVersion: () => (app.hasDecorator('traefikVersion') ? app.traefikVersion.current() : null),
  });
  service.attach(
    await app.store.collection<MiddlewareData>({
      name: 'middlewares',
      schema: MiddlewareFile,
      check: (id, data) => service.checkFile(id, data),
      normalize: (data) => ({ ...data, description: data.description ?? '' }),
    }),
  );
  app.decorate('middlewares', service);
  app.decorate('middlewaresView', {
    list: () => structuredClone(service.list()),
    get: (id: string) => structuredClone(service.get(id)),
  } satisfies MiddlewaresView);

  if (app.config.templates.seed) {
    await seedTemplates<MiddlewareTemplate>({
      dir: options.templatesDir ?? DEFAULT_TEMPLATES_DIR,
      key: 'middlewares',
      schema: { ...MiddlewareCreate, required: [...(MiddlewareCreate.required ?? []), 'id'] },
      settings: app.settings,
      log: app.log,
      seed: (template) => service.seed(template),
    });
  }
  await app.register(routes, { service });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(app: FastifyInstance, { service }: { service: MiddlewareService }): Promise<void> {
  const scope = app.withTypeProvider<TypeBoxTypeProvider>();
  const auth = { auth: 'config' as const };
  const sendOne = (reply: FastifyReply, view: MiddlewareView, status = 200) =>
    reply.code(status).header('etag', quoteEtag(view.etag)).send(view);

  scope.get('/api/middlewares', { config: auth, schema: listSchema }, async (request, reply) => {
    return paginate(request, reply, service.list(request.query), request.query);
  });

  scope.post('/api/middlewares', { config: auth, schema: createSchema }, async (request, reply) => {
    const view = await service.create(request.body);
    reply.header('location', `/api/middlewares/${view.id}`);
    return sendOne(reply, view, 201);
  });

  scope.get('/api/middlewares/:id', { config: auth, schema: getSchema }, async (request, reply) => {
    const { id } = request.params;
    const view = service.get(id);
    if (!view) throw middlewareErrors.notFound(id);
    if (ifNoneMatchHits(request.headers['if-none-match'], view.etag))
      return reply.header('etag', quoteEtag(view.etag)).code(304).send();
    return sendOne(reply, view);
  });

  scope.put('/api/middlewares/:id', { config: auth, schema: replaceSchema }, async (request, reply) => {
    const { id } = request.params;
    return sendOne(reply, await service.replace(id, request.body, ifMatchOf(request)));
  });

  scope.delete('/api/middlewares/:id', { config: auth, schema: deleteSchema }, async (request, reply) => {
    const { id } = request.params;
    const { force } = request.query;
    await service.remove(id, { force: isTrue(force), ifMatch: ifMatchOf(request) });
    return reply.code(204).send();
  });
}

export default fp(middlewares, { name: 'middlewares', dependencies: ['datasource'] });
