/** Helpers of the events tests: a listening app and SSE clients closed when the test ends. */
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { openSse, type SseClient } from './sse-client.ts';

/** Listens on an ephemeral port of 127.0.0.1; returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

/** Opens an event stream; closed at teardown. */
export async function stream(
  t: ExecutionContext<any>,
  url: string,
  headers?: Record<string, string>,
): Promise<SseClient> {
  const client = await openSse(url, { headers });
  t.teardown(() => client.close());
  return client;
}

/** The data of the events of one type, parsed. */
export function dataOf(client: SseClient, type: string): any[] {
  return client.events.filter((e) => e.event === type).map((e) => JSON.parse(e.data));
}
