/**
 * One log line per request instead of Fastify's two ("incoming request" + "request completed").
 * Provider polls (the `provider` route class) are logged at debug whatever they answer (API.md
 * §2.11): every Traefik instance polls every few seconds forever, and a 502 or a stale answer lasts
 * as long as Pangolin is down, so the proxy-config group logs only the changes of answer
 * (plugins/proxy-config/answer-log.ts). Other machine traffic that succeeds — health checks,
 * forwardAuth checks (`public`) — is at debug too; every other request, and any other request
 * answered with an error status, at info.
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
    const machine = access === 'provider' || (access === 'public' && reply.statusCode < 400);
    reply.log[machine ? 'debug' : 'info'](
      { req: request, res: { statusCode: reply.statusCode }, responseTime },
      'request completed',
    );
  }
}
