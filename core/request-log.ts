/**
 * One log line per request instead of Fastify's two ("incoming request" + "request completed").
 * Machine traffic that succeeds — Traefik's provider polls, health checks, forwardAuth checks (the
 * `provider` and `public` route classes) — is logged at debug, so a polling Traefik does not fill
 * the log; every other request, and any request answered with an error status, at info.
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class RequestLogController extends LogController {
  override incomingRequest(): void {
    // folded into the one line written when the response is done
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const responseTime = Math.round(reply.elapsedTime * 10) / 10;
    if (error) {
      reply.log.error(
        { req: request, res: { statusCode: reply.statusCode }, err: error, responseTime },
        'request errored',
      );
      return;
    }
    const access = request.is404 ? null : request.routeOptions.config?.auth;
    const machine = (access === 'provider' || access === 'public') && reply.statusCode < 400;
    reply.log[machine ? 'debug' : 'info'](
      { req: request, res: { statusCode: reply.statusCode }, responseTime },
      'request completed',
    );
  }
}
