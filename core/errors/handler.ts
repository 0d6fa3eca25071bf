/** Root error and not-found handling: every status ≥ 400 leaves as `{id, message, details?}`. */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { AppError, errors, validationError, type ErrorDetail } from './app-error.ts';
import { StoreError } from '../store/errors.ts';
import { explainAjv } from './explain.ts';

type Validation = NonNullable<FastifyError['validation']>;

/** Ajv errors from Fastify's validator → `{path, message}` with the JSON Pointer of API.md §2.4. */
function validationDetails(validation: Validation, context: string | undefined, data: unknown): ErrorDetail[] {
  const prefix = context === 'body' || !context ? '' : `/${context === 'querystring' ? 'query' : context}`;
  return explainAjv(validation as Parameters<typeof explainAjv>[0], data).map((d) => ({
    path: prefix + d.path,
    message: d.message,
  }));
}

/** The validated part of a request, for "received …" in messages. */
function validatedData(request: FastifyRequest | undefined, context: string | undefined): unknown {
  if (!request) return undefined;
  switch (context) {
    case 'querystring':
      return request.query;
    case 'params':
      return request.params;
    case 'headers':
      return request.headers;
    default:
      return request.body;
  }
}

/** The API error of a store refusal (the store itself knows no HTTP). */
function storeErrorOf(error: StoreError): AppError {
  switch (error.kind) {
    case 'version_conflict':
      return errors.preconditionFailed();
    case 'already_exists':
      return errors.alreadyExists(error.message);
    case 'invalid_id':
      return errors.validation(error.message, [{ path: '/params/id', message: error.rule ?? error.message }]);
    case 'replica_unavailable':
      return errors.upstreamUnavailable(error.message);
  }
}

/** Maps anything thrown to an AppError; unknown errors become undefined (→ 500). */
export function toAppError(
  error: FastifyError | AppError | Error,
  bodyLimit: number,
  request?: FastifyRequest,
): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof StoreError) return storeErrorOf(error);
  const e = error as FastifyError;
  if (e.validation) {
    const details = validationDetails(e.validation, e.validationContext, validatedData(request, e.validationContext));
    return e.validationContext === 'body' &&
      details.length === 1 &&
      details[0].path === '' &&
      /must be object/.test(details[0].message)
      ? errors.validation('request body is required and must be a JSON object', [
          { path: '', message: details[0].message },
        ])
      : validationError(details);
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(400, 'invalid_json', 'Content-Length does not match the body');
  }
  if (e instanceof SyntaxError && e.statusCode === 400) return errors.invalidJson();
  if (typeof e.statusCode === 'number' && e.statusCode === 413) return errors.payloadTooLarge(bodyLimit);
  return undefined;
}

export function sendError(reply: FastifyReply, err: AppError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  const body: Record<string, unknown> = { ...err.extra, id: err.id, message: err.message };
  if (err.details) body.details = err.details;
  return reply.code(err.statusCode).type('application/json; charset=utf-8').send(body);
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/** Installs the root error handler, JSON 404 and 405 (with Allow). Call once, first. */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  // A shadow router of every route's method+path, so a 404 can tell "wrong method" (405) apart.
  const shadow = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    if (route.config?.methodHint === false) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (!METHODS.includes(m as (typeof METHODS)[number])) continue;
      try {
        shadow.on(m as 'GET', route.url, () => undefined);
      } catch {
        // already registered (HEAD for GET, prefixed duplicates): harmless
      }
    }
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = toAppError(error, bodyLimit, request);
    if (mapped) {
      // 502/503 are expected states (upstream down, not configured): worth a warning, not a stack
      // trace; but not per provider poll (API.md §2.11: its changes of answer are logged once)
      if (mapped.statusCode >= 500)
        request.log[request.routeOptions.config?.auth === 'provider' ? 'debug' : 'warn'](
          { id: mapped.id },
          mapped.message,
        );
      return sendError(reply, mapped);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new AppError(500, 'internal', `internal error (request ${request.id})`));
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url.split('?')[0];
    const allowed = METHODS.filter((m) => m !== request.method && shadow.find(m, url));
    if (allowed.length > 0 && !(allowed.length === 1 && allowed[0] === 'OPTIONS')) {
      return sendError(
        reply,
        errors.methodNotAllowed(
          request.method,
          allowed.filter((m) => m !== 'OPTIONS'),
        ),
      );
    }
    return sendError(reply, errors.notFound(`no route ${request.method} ${url}`));
  });
}
