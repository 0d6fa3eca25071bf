/** The WebSocket Origin rule (API.md §4.13): absent, same-origin, or listed in `cors.origins`. */
import type { FastifyRequest } from 'fastify';

export function originAllowed(request: FastifyRequest, corsOrigins: string[]): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true; // not a browser
  if (corsOrigins.includes('*') || corsOrigins.includes(origin)) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
