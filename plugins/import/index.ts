/**
 * The import group (API.md §4.24): POST /api/import/middleware-manager reads middleware-manager's
 * SQLite database and creates our middlewares, services, assignments and overrides from it. It
 * uses the other groups only through their decorators (middlewares, services) and routes (resources).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import { AppError, errors } from '../../core/errors/app-error.ts';
import { isTrue } from '../../model/schemas.ts';
import type { MiddlewareCreateBody } from '../middlewares/schemas.ts';
import type { ServiceCreateBody } from '../services/schemas.ts';
import type { ImportWriter } from './apply.ts';
import { importSchema, MAX_DATABASE_BYTES } from './schemas.ts';
import { ImportService } from './service.ts';
import type { OurState } from './types.ts';

async function importGroup(app: FastifyInstance, _options: GroupOptions): Promise<void> {
  const service = new ImportService({ state: () => ourState(app), log: app.log.child({ component: 'import' }) });
  await app.register(routes, { service });
}

/** The HTTP route, encapsulated: its octet-stream parser and 100 MiB limit stay here. */
async function routes(parent: FastifyInstance, { service }: { service: ImportService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  scope.addContentTypeParser(
    'application/octet-stream',
    { parseAs: 'buffer', bodyLimit: MAX_DATABASE_BYTES },
    (_request, body, done) => done(null, body),
  );
  scope.post(
    '/api/import/middleware-manager',
    {
      config: { auth: 'config' as const, role: 'admin' as const },
      schema: importSchema,
      bodyLimit: MAX_DATABASE_BYTES,
    },
    async (request) => {
      const body: unknown = request.body;
      if (!Buffer.isBuffer(body))
        throw body === undefined
          ? errors.validation('the body must be the middleware-manager database file', [
              { path: '/body', message: 'is missing' },
            ])
          : errors.unsupportedMediaType(String(request.headers['content-type'] ?? ''));
      return service.importDatabase(body, isTrue(request.query.dry_run), writerFor(parent, request));
    },
  );
}

/** What the planner sees of our objects, read fresh at each import. */
function ourState(app: FastifyInstance): OurState {
  const services = app.services.list();
  return {
    middlewares: app.middlewares.list(),
    services,
    resources: app.resources.views(),
    middlewareIdTaken: (id) => app.middlewares.has(id) || app.upstream.hasKey('http.middlewares', id),
    serviceIdTaken: (id) =>
      app.services.has(id) ||
      services.some((s) => s.id === id) ||
      (['http.services', 'tcp.services', 'udp.services'] as const).some((section) => app.upstream.hasKey(section, id)),
    checkMiddleware: (id, data) =>
      app.middlewares.checkFile(id, data as Parameters<typeof app.middlewares.checkFile>[1]),
    checkService: (id, data) => app.services.checkFile(id, data as Parameters<typeof app.services.checkFile>[1]),
  };
}

/**
 * Middlewares and services through their groups' services; resources through their routes (the
 * resources group exposes no write decorator), as the importing caller: same token, same checks,
 * and the history and audit log attribute the writes to it.
 */
function writerFor(app: FastifyInstance, request: FastifyRequest): ImportWriter {
  const description = (from: string) => `imported from middleware-manager (its id ${from})`;
  return {
    createMiddleware: async (m) => {
      await app.middlewares.create({
        id: m.id,
        name: m.name,
        type: m.type as MiddlewareCreateBody['type'],
        config: m.config,
        description: description(m.from),
      });
    },
    removeMiddleware: (id) => app.middlewares.remove(id, { force: true }),
    createService: async (s) => {
      await app.services.create({
        id: s.id,
        name: s.name,
        type: s.type as ServiceCreateBody['type'],
        protocol: s.protocol,
        config: s.config,
        description: description(s.from),
      });
    },
    removeService: (id) => app.services.remove(id),
    resource: async (method, url, body) => {
      const headers: Record<string, string> = { 'x-request-id': String(request.id) };
      if (request.headers.authorization) headers.authorization = request.headers.authorization;
      const response = await app.inject({
        method,
        url,
        headers,
        ...(body === undefined ? {} : { payload: body as object }),
      });
      if (response.statusCode < 300) return;
      const answer = safeJson(response.body);
      throw new AppError(
        response.statusCode,
        typeof answer.id === 'string' ? answer.id : 'internal',
        `${method} ${url}: ${typeof answer.message === 'string' ? answer.message : `answered ${response.statusCode}`}`,
        Array.isArray(answer.details) ? answer.details : undefined,
      );
    },
  };
}

function safeJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export default fp(importGroup, {
  name: 'import',
  dependencies: ['datasource', 'middlewares', 'services', 'resources'],
});
