/** The one error type the root handler renders as `{id, message, details?}` (API.md §2.4). */

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly id: string,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra top-level fields merged into the body (503 `unhealthy` carries the status object). */
    readonly extra?: Record<string, unknown>,
    /** Extra reply headers (Allow, Retry-After, WWW-Authenticate). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** Factories for the core catalogue; groups add their own in their errors.ts. */
export const errors = {
  invalidJson: (message = 'request body is not valid JSON') => new AppError(400, 'invalid_json', message),
  authFailed: (message = 'authentication required') =>
    new AppError(401, 'auth_failed', message, undefined, undefined, {
      'www-authenticate': 'Bearer realm="stack-manager"',
    }),
  forbidden: (message = 'your token does not allow this operation') => new AppError(403, 'forbidden', message),
  notFound: (message = 'not found') => new AppError(404, 'not_found', message),
  methodNotAllowed: (method: string, allow: string[]) =>
    new AppError(
      405,
      'method_not_allowed',
      `method ${method} is not allowed here; allowed: ${allow.join(', ')}`,
      undefined,
      undefined,
      { allow: allow.join(', ') },
    ),
  unsupportedVersion: (version: string) =>
    new AppError(406, 'unsupported_version', `API version ${version} is not supported; supported: 1`),
  conflict: (message: string, details?: ErrorDetail[]) => new AppError(409, 'conflict', message, details),
  alreadyExists: (message: string) => new AppError(409, 'already_exists', message),
  inUse: (message: string, details: ErrorDetail[]) => new AppError(409, 'in_use', message, details),
  preconditionFailed: (message = 'If-Match does not match the current ETag') =>
    new AppError(412, 'precondition_failed', message),
  payloadTooLarge: (limit: number) =>
    new AppError(413, 'payload_too_large', `request body is larger than ${limit} bytes`),
  unsupportedMediaType: (type: string) =>
    new AppError(
      415,
      'unsupported_media_type',
      `content type ${type || '(none)'} is not supported; send application/json`,
    ),
  validation: (message: string, details: ErrorDetail[]) => new AppError(422, 'validation_failed', message, details),
  rateLimited: (retryAfterS: number) =>
    new AppError(429, 'rate_limited', 'too many failed authentications; try again later', undefined, undefined, {
      'retry-after': String(retryAfterS),
    }),
  upstreamUnavailable: (message: string) => new AppError(502, 'upstream_unavailable', message),
  notConfigured: (message: string) => new AppError(503, 'not_configured', message),
  unhealthy: (message: string, body: Record<string, unknown>) =>
    new AppError(503, 'unhealthy', message, undefined, body),
  pluginUnavailable: (name: string, message: string) =>
    new AppError(503, 'plugin_unavailable', `plugin ${name} is not available: ${message}`),
};

/** One detail per failing field: builds a 422 whose message names the first. */
export function validationError(details: ErrorDetail[]): AppError {
  const first = details[0];
  const where = first?.path ? first.path.replace(/^\//, '') : 'body';
  return errors.validation(first ? `${where} ${first.message}` : 'validation failed', details);
}

/** Ids of the core error catalogue (API.md §2.4), listed for plugins as `errors.catalogue`. */
export const CORE_ERROR_IDS: readonly string[] = Object.freeze([
  'invalid_json',
  'bad_request',
  'headers_too_large',
  'request_timeout',
  'websocket_required',
  'auth_failed',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'unsupported_version',
  'conflict',
  'already_exists',
  'in_use',
  'read_only',
  'resource_active',
  'busy',
  'precondition_failed',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'invalid_archive',
  'rate_limited',
  'internal',
  'upstream_unavailable',
  'not_configured',
  'unhealthy',
  'plugin_unavailable',
]);
