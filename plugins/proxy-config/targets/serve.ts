/**
 * Serving a target's document: the same negotiation and precomputed headers as the default
 * document (index.ts serveConfig), on the target's own prepared bytes and ETag.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { providerHeaders } from '../headers.ts';
import { acceptsGzip, matchesIfNoneMatch, wantsYaml } from '../negotiate.ts';
import { proxyConfigErrors } from '../errors.ts';
import { targetErrors } from './errors.ts';
import { recordPoll, recordUnavailablePoll, type Targets } from './setup.ts';

export function serveTarget(
  targets: Targets,
  request: FastifyRequest,
  reply: FastifyReply,
  id: string,
  format: 'json' | 'yaml' | undefined,
  stale: boolean,
): FastifyReply {
  const document = targets.documents.get(id);
  if (!document) {
    if (!targets.service.has(id)) throw targetErrors.notFound(id);
    // a target document is derived from the default one: none before this run's first generation
    recordUnavailablePoll(targets, id, request);
    throw proxyConfigErrors.neverProduced(`target ${id} has no document before the first generation of this run`);
  }
  const yaml = format ? format === 'yaml' : wantsYaml(request.headers.accept);
  const encoded = yaml ? document.yaml : document.json;
  const headers = providerHeaders(document, encoded, yaml, stale);
  const notModified = matchesIfNoneMatch(request.headers['if-none-match'], encoded.etag);
  recordPoll(targets, id, request, encoded.etag, yaml, notModified);
  if (notModified) return reply.headers(headers.notModified).code(304).send();
  if (encoded.gzip && acceptsGzip(request.headers['accept-encoding']))
    return reply.headers(headers.gzip).send(encoded.gzip);
  return reply.headers(headers.plain).send(encoded.body);
}
