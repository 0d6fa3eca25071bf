/**
 * One log line per request instead of Fastify's two ("incoming request" + "request completed").
 * Machine traffic that succeeds — Traefik's provider polls, health checks, forwardAuth checks (the
 * `provider` and `public` route classes) — is logged at debug, so a polling Traefik does not fill
 * the log; every other request, and any request answered with an error, at info.
 */
import type { FastifyInstance } from 'fastify';

/** Adds the onResponse hook; Fastify's own request logging must be off (`disableRequestLogging`). */
export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const access = request.is404 ? null : request.routeOptions.config?.auth;
    const machine = (access === 'provider' || access === 'public') && reply.statusCode < 400;
    const level = machine ? 'debug' : 'info';
    request.log[level]({ req: request, res: { statusCode: reply.statusCode }, responseTime: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
    done();
  });
}
