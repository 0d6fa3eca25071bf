/**
 * The two middleware types of API.md §4.2 whose effect the other end-to-end files did not show
 * (issue 25 item 3: every type with its real effect): contentType and grpcWeb, created and assigned
 * through Stack Manager's API, through a real Traefik. contentType: a backend answering HTML without
 * a Content-Type gets none through Traefik 3 until the middleware is assigned, then the detected
 * `text/html; charset=utf-8`. grpcWeb: a gRPC-Web call (HTTP/1.1, `application/grpc-web+proto`) to
 * an h2c gRPC backend reaches it as it was sent until the middleware is assigned; then the backend
 * gets `application/grpc` over HTTP/2 and the client the gRPC-Web answer, its trailers
 * (`grpc-status`) moved into the body as the trailer frame. One stack for the file, one resource
 * per test, concurrent.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN, type TraefikReply, type TraefikRequest } from '../helpers/traefik.ts';
import {
  assertEnabled,
  assign,
  createMiddleware,
  routerOf,
  serveFrom,
  startServer,
  waitForLoaded,
} from './middlewares-support.ts';

const e2e = TRAEFIK_BIN ? test : traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

const RESOURCES = [
  { id: 1, name: 'ctype', host: 'ctype.test', backends: ['a'] },
  { id: 2, name: 'grpcweb', host: 'grpcweb.test', backends: ['a'] },
];
type Name = 'ctype' | 'grpcweb';
const resource = (name: Name) => RESOURCES.find((r) => r.name === name)!;
const router = (name: Name) => routerOf(resource(name));

const HTML = '<!DOCTYPE html><html><head><title>e2e</title></head><body>no content type</body></html>';

/** One gRPC call as the h2c backend received it. */
interface GrpcCall {
  path: string;
  contentType: string | undefined;
  body: Buffer;
}
const grpcCalls: GrpcCall[] = [];

/** A gRPC message frame: flag 0 (data) or 0x80 (gRPC-Web trailers), 4-byte big-endian length, payload. */
const frame = (payload: string, flag = 0) => {
  const data = Buffer.from(payload, 'utf8');
  const header = Buffer.alloc(5);
  header.writeUInt8(flag, 0);
  header.writeUInt32BE(data.length, 1);
  return Buffer.concat([header, data]);
};

/** Splits a gRPC(-Web) body into its frames. */
function frames(bytes: Buffer): Array<{ flag: number; payload: string }> {
  const out: Array<{ flag: number; payload: string }> = [];
  for (let at = 0; at + 5 <= bytes.length;) {
    const length = bytes.readUInt32BE(at + 1);
    out.push({ flag: bytes[at], payload: bytes.subarray(at + 5, at + 5 + length).toString('utf8') });
    at += 5 + length;
  }
  return out;
}

/**
 * An h2c (cleartext HTTP/2) gRPC server: any call is answered with one message echoing the request's
 * payload and the trailers `grpc-status: 0`, `grpc-message: ok`. A non-gRPC request gets a plain 415.
 */
async function startGrpcBackend(t: ExecutionContext): Promise<string> {
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = headers['content-type'];
      grpcCalls.push({ path: String(headers[':path']), contentType, body });
      if (contentType !== 'application/grpc' && contentType !== 'application/grpc+proto') {
        stream.respond({ ':status': 415, 'content-type': 'text/plain' });
        stream.end(`not gRPC: ${contentType}`);
        return;
      }
      const asked = frames(body)[0]?.payload ?? '';
      stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'ok' }));
      stream.end(frame(`echo:${asked}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `h2c://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  const context = hook.context(t);
  // an HTML body with no Content-Type header at all (node:http sets none unless told)
  const html = await startServer(context, (_request, response) => response.end(HTML));
  const grpc = await startGrpcBackend(context);
  stack = await startStack(context, {
    resources: RESOURCES,
    editDocument: (document) => {
      serveFrom(document, resource('ctype'), html.url);
      serveFrom(document, resource('grpcweb'), grpc);
    },
  });
});

/** Waits until a request to the resource's host on websecure satisfies `check`. */
const through = (name: Name, check: (reply: TraefikReply) => boolean, options: Partial<TraefikRequest> = {}) =>
  stack.traefik.waitForReply({ entryPoint: 'websecure', host: resource(name).host, ...options }, check);

e2e(
  'contentType: an HTML answer without Content-Type gets none until the middleware sets the detected one',
  async (t) => {
    const before = await through('ctype', (r) => r.status === 200);
    t.is(before.body, HTML);
    t.is(before.headers['content-type'], undefined, 'Traefik 3 detects no content type by itself');

    await createMiddleware(stack, { id: 'px-ctype', type: 'contentType', config: {} });
    await assign(stack, router('ctype'), 'px-ctype');
    const after = await through('ctype', (r) => r.headers['content-type'] !== undefined);
    t.is(after.status, 200);
    t.is(after.headers['content-type'], 'text/html; charset=utf-8');
    t.is(after.body, HTML);
    assertEnabled(t, await waitForLoaded(stack.traefik, router('ctype'), ['px-ctype']));
  },
);

e2e('grpcWeb: a gRPC-Web call reaches the h2c backend as gRPC, its trailers come back in the body', async (t) => {
  const call = (message: string): Partial<TraefikRequest> => ({
    method: 'POST',
    path: '/e2e.Echo/Say',
    headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
    // the frame header's bytes are below 0x80, so the string goes out byte for byte
    body: frame(message).toString('latin1'),
  });

  // without the middleware Traefik forwards the gRPC-Web request as it came; this backend refuses it
  const plain = await through('grpcweb', (r) => r.status === 415, call('before'));
  t.is(plain.body, 'not gRPC: application/grpc-web+proto');
  t.is(grpcCalls.at(-1)?.contentType, 'application/grpc-web+proto');

  await createMiddleware(stack, { id: 'px-grpcweb', type: 'grpcWeb', config: { allowOrigins: ['*'] } });
  await assign(stack, router('grpcweb'), 'px-grpcweb');
  const reply = await through('grpcweb', (r) => r.status === 200, call('hello'));
  t.regex(String(reply.headers['content-type']), /^application\/grpc-web/);
  // the client (HTTP/1.1) gets the message frame, then the trailers as a 0x80 frame
  const [message, trailers] = frames(reply.bytes);
  t.deepEqual(message, { flag: 0, payload: 'echo:hello' });
  t.is(trailers?.flag, 0x80);
  t.regex(trailers?.payload ?? '', /grpc-status: ?0\r\n/i);
  t.regex(trailers?.payload ?? '', /grpc-message: ?ok\r\n/i);
  // the backend got a gRPC call over HTTP/2 with the same message
  const seen = grpcCalls.at(-1)!;
  t.is(seen.path, '/e2e.Echo/Say');
  t.regex(String(seen.contentType), /^application\/grpc(\+proto)?$/);
  t.deepEqual(frames(seen.body), [{ flag: 0, payload: 'hello' }]);
  assertEnabled(t, await waitForLoaded(stack.traefik, router('grpcweb'), ['px-grpcweb']));
});
