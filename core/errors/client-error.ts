/**
 * Answers what Node's HTTP parser refuses before Fastify sees a request — headers past
 * http.maxHeaderSize, a NUL or a bare CR in a header value, a malformed request line, a request that
 * did not arrive in time — as `{id, message}` like every other error (API.md §2). Fastify's default
 * answers `{error, message, statusCode}`, and logs the error whose rawPacket holds the request's
 * bytes, an Authorization token included: only the parser's code is logged here.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';

type ClientError = Error & { code?: string };

function answerFor(code: string | undefined): [number, string, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'request_timeout', 'the request did not arrive in time'];
  if (code === 'HPE_HEADER_OVERFLOW')
    return [431, 'headers_too_large', `the request headers are larger than ${http.maxHeaderSize} bytes`];
  return [400, 'bad_request', `the request is not valid HTTP/1.1 (${code ?? 'unknown parser error'})`];
}

/** Fastify's `clientErrorHandler` (bound to the instance): one JSON answer, then the socket is closed. */
export function answerClientError(this: FastifyInstance, error: ClientError, socket: Duplex): void {
  // a reset connection, or one already answered (a hot reload leaves one handler per generation)
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, id, message] = answerFor(error.code);
  this.log.debug({ code: error.code, status }, 'client error');
  const body = JSON.stringify({ id, message });
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy();
}
