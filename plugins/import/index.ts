/**
 * The import group (API.md §4.24): POST /api/import/middleware-manager reads middleware-manager's
 * SQLite database and creates our middlewares, services, assignments and overrides from it. It
 * uses the other groups only through their decorators (middlewares, services) and routes (resources).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import { errors } from '../../core/errors/app-error.ts';
import { isTrue } from '../../model/schemas.ts';
import { importSchema, MAX_DATABASE_BYTES } from './schemas.ts';
import { ImportService } from './service.ts';
import type { OurState } from './types.ts';
import { writerFor } from './writer.ts';

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

export default fp(importGroup, {
  name: 'import',
  dependencies: ['datasource', 'middlewares', 'services', 'resources'],
});
