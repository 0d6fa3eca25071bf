/** /api/auth: token management (class A) and whoami (class O), API.md §4.15. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../../model/schemas.ts';
import { paginate } from '../../model/http.ts';
import { authErrors } from './errors.ts';
import { CommonErrors, CreatedToken, CreateTokenBody, ListQuery, TokenList, TokenParams, WhoAmI } from './schemas.ts';

const TOKENS = '/api/auth/tokens';

/** The token and whoami routes; all logic lives in `app.auth` (core/auth). */
async function authRoutes(app: FastifyInstance): Promise<void> {
  await app.register(routes);
}

/** The HTTP routes, in their own scope. */
async function routes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    TOKENS,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'List API tokens (never their values)',
        querystring: ListQuery,
        response: { 200: TokenList, ...CommonErrors },
      },
    },
    async (request, reply) => paginate(request, reply, app.auth.list(), request.query),
  );

  app.post(
    TOKENS,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Create an API token; its value is shown only in this reply',
        body: CreateTokenBody,
        response: { 201: CreatedToken, 409: ErrorBody, ...CommonErrors },
      },
    },
    async (request, reply) => {
      const { name, role, expires_in_days } = request.body;
      const created = await app.auth.create(name, role, expires_in_days);
      if (created === 'exists') throw authErrors.tokenExists(name);
      request.log.info({ token: created.info.name, role }, 'API token created');
      const { last_used_at: _unused, ...info } = created.info;
      return reply
        .code(201)
        .header('location', `${TOKENS}/${name}`)
        .header('cache-control', 'no-store')
        .send({ ...info, token: created.token });
    },
  );

  app.delete(
    `${TOKENS}/:name`,
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Delete an API token (not the last admin token)',
        params: TokenParams,
        response: {
          204: Type.Unsafe<undefined>({ type: 'null', description: 'deleted' }),
          404: ErrorBody,
          409: ErrorBody,
          ...CommonErrors,
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const outcome = await app.auth.remove(name);
      if (outcome === 'not_found') throw authErrors.tokenNotFound(name);
      if (outcome === 'last_admin') throw authErrors.lastAdminToken(name);
      request.log.info({ token: name }, 'API token deleted');
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/auth/whoami',
    {
      config: { auth: 'operations' },
      schema: {
        tags: ['auth'],
        summary: 'The token this request authenticated with',
        response: { 200: WhoAmI, ...CommonErrors },
      },
    },
    async (request) => {
      // The hook always sets a principal; an open route runs as {name: null, role: 'admin'}.
      const principal = request.principal ?? { name: null, role: 'admin' as const };
      return { name: principal.name, role: principal.role, auth_mode: app.auth.mode };
    },
  );
}

// named apart from the core `auth` plugin it depends on (fastify-plugin names are unique)
export default fp(authRoutes, { name: 'auth-routes', dependencies: ['auth'] });
