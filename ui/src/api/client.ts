/**
 * The typed API client: openapi-fetch over the generated `paths`, so a route or field the server
 * does not have is a compile error. Every call sends the session's token (if any) as Bearer.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { currentToken } from '../lib/token';

export type { paths, components } from './schema';

/** An error reply of the API (`{id, message, details}`), thrown by `unwrap`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly id: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

const authHeader: Middleware = {
  onRequest({ request }) {
    const token = currentToken();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(authHeader);

interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** Returns the body of a successful reply, or throws the server's error as an ApiError. */
export async function unwrap<R extends FetchResult>(call: Promise<R>): Promise<NonNullable<R['data']>> {
  const { data, error, response } = await call;
  if (response.ok) return data as NonNullable<R['data']>;
  throw toApiError(response.status, error);
}

export function toApiError(status: number, body: unknown): ApiError {
  const err = (body ?? {}) as { id?: string; message?: string; details?: { path: string; message: string }[] };
  return new ApiError(status, err.id ?? 'http_' + status, err.message ?? `HTTP ${status}`, err.details ?? []);
}

/** Saves a Blob under a file name (same-origin object URL, no navigation). */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
