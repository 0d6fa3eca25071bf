/** The writes of an import (plugins/import/apply.ts) on the real groups. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors/app-error.ts';
import type { MiddlewareCreateBody } from '../middlewares/schemas.ts';
import type { ServiceCreateBody } from '../services/schemas.ts';
import type { ImportWriter } from './apply.ts';

/**
 * Middlewares and services through their groups' batch writes; resources through their routes (the
 * resources group exposes no write decorator), as the importing caller: same token, same checks,
 * and the history and audit log attribute the writes to it.
 */
export function writerFor(app: FastifyInstance, request: Pick<FastifyRequest, 'id' | 'headers'>): ImportWriter {
  const description = (from: string) => `imported from middleware-manager (its id ${from})`;
  return {
    createMiddlewares: async (ms) => {
      await app.middlewares.createMany(
        ms.map((m) => ({
          id: m.id,
          name: m.name,
          type: m.type as MiddlewareCreateBody['type'],
          config: m.config,
          description: description(m.from),
        })),
      );
    },
    removeMiddlewares: (ids) => app.middlewares.removeMany(ids, { force: true }),
    createServices: async (ss) => {
      await app.services.createMany(
        ss.map((s) => ({
          id: s.id,
          name: s.name,
          type: s.type as ServiceCreateBody['type'],
          protocol: s.protocol,
          config: s.config,
          description: description(s.from),
        })),
      );
    },
    removeServices: (ids) => app.services.removeMany(ids),
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
