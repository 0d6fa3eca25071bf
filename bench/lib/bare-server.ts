/**
 * A reference server for the provider row: serves the same bytes as the provider (plain, or the
 * same pre-compressed gzip when the client accepts it) with no hooks, as fast as each stack allows.
 * The Fastify reference is `Fastify()` with its defaults — no logger, request ids from a counter, no
 * hooks, no server factory — which is cheaper per request than the app's own Fastify options (pino
 * at `log.level`, UUID request ids, genReqId, trustProxy, a server factory): a stricter reference.
 * node:http is the floor any Node server pays for the same writeHead + end. `fastify-headers` is the
 * bare Fastify route sending the headers API.md promises on every provider answer (API-Version,
 * Cache-Control, ETag with 304, Vary, X-Config-Generated-At, a UUID X-Request-Id): the same bytes
 * on the wire, headers included, and nothing else.
 *   node --import tsx bench/lib/bare-server.ts fastify|fastify-headers|http PORT PLAIN_FILE GZIP_FILE [ETAG]
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Fastify from 'fastify';

const [kind, port, plainFile, gzFile, givenEtag] = process.argv.slice(2);
const plain = readFileSync(plainFile);
const gz = readFileSync(gzFile);
const wantsGzip = (header: string | undefined) => header !== undefined && header.includes('gzip');

if (kind === 'fastify') {
  const app = Fastify();
  app.get('/config', (request, reply) => {
    reply.type('application/json; charset=utf-8');
    if (wantsGzip(request.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(gz);
    return reply.send(plain);
  });
  await app.listen({ host: '127.0.0.1', port: Number(port) });
} else if (kind === 'fastify-headers') {
  const app = Fastify();
  // the provider's own ETag when given, so a client's If-None-Match means the same to both
  const etag = givenEtag ?? `"${createHash('md5').update(plain).digest('hex')}"`;
  const generatedAt = new Date().toISOString();
  app.get('/config', (request, reply) => {
    reply.headers({
      'api-version': '1',
      'cache-control': 'no-cache',
      etag,
      vary: 'Accept, Accept-Encoding',
      'x-config-generated-at': generatedAt,
      'x-request-id': randomUUID(),
    });
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    reply.type('application/json; charset=utf-8');
    if (wantsGzip(request.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(gz);
    return reply.send(plain);
  });
  await app.listen({ host: '127.0.0.1', port: Number(port) });
} else {
  const server = createServer((request, response) => {
    const zipped = wantsGzip(request.headers['accept-encoding']);
    const body = zipped ? gz : plain;
    response.writeHead(
      200,
      zipped
        ? {
            'content-type': 'application/json; charset=utf-8',
            'content-encoding': 'gzip',
            'content-length': body.length,
          }
        : { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length },
    );
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(Number(port), '127.0.0.1', resolve));
}
process.stdout.write('ready\n');
