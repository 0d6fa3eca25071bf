/**
 * Live events (API.md §4.17): the `app.events` bus every group publishes on, and GET /api/events,
 * a Server-Sent Events stream of them with Last-Event-ID replay. Registered before every group
 * that publishes.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBody } from '../../model/schemas.ts';
import { EVENT_TYPES, EventHub, type BusEvent, type EventBus, type EventType } from './bus.ts';
import { EventsHeaders, EventsQuery } from './schemas.ts';
import { publishStoreChanges } from './store-events.ts';
import { SseStream } from './stream.ts';

export type { EventBus, EventListener, EventType } from './bus.ts';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus;
  }
}

/** Browsers wait this long before reconnecting a dropped stream. */
const RETRY_MS = 2000;

async function events(app: FastifyInstance): Promise<void> {
  const settings = app.config.events;
  // ids continue across restarts and reloads (see EventHub): a stale Last-Event-ID gets `reset`
  const hub = new EventHub(settings.replay_size, Date.now() * 1000, app.log.child({ component: 'events' }));
  app.decorate('events', {
    publish: (type: EventType, data: object) => hub.publish(type, data),
    listen: (listener) => hub.listen(listener),
  } satisfies EventBus);

  const streams = new Set<SseStream>();
  const endAll = () => {
    for (const stream of [...streams]) stream.end();
  };
  // a reload or shutdown ends the streams at once: the drain would otherwise wait for them
  app.lifecycle.retiring.add(endAll);
  const heartbeat = setInterval(() => {
    for (const stream of streams) stream.write(': keep-alive\n\n');
  }, settings.heartbeat_ms);
  heartbeat.unref();

  const storeEvents = publishStoreChanges(app.store, hub);
  app.addHook('onReady', async () => storeEvents.start());
  app.addHook('onClose', async () => {
    clearInterval(heartbeat);
    storeEvents.stop();
    endAll();
  });

  await app.register(routes, { open });

  function open(request: FastifyRequest, reply: FastifyReply, types: string | undefined): void {
    const wanted = new Set<EventType>(types ? (types.split(',') as EventType[]) : EVENT_TYPES);
    // class-O events need a token that may use operation routes: any valid token (GET needs viewer),
    // or no token at all when auth is off. The route is class C, so in `ops` mode a caller without
    // a token gets the configuration events only.
    const mayOperate = app.config.auth.mode === 'off' || request.principal?.name != null;
    const accepts = (event: BusEvent) => wanted.has(event.type) && (mayOperate || !event.restricted);

    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // nginx and similar proxies: pass every frame on at once
      'x-accel-buffering': 'no',
    });
    // HEAD: the headers of the stream, and no endless body
    if (request.method === 'HEAD') {
      res.end();
      return;
    }
    res.socket?.setNoDelay(true);
    const stream = new SseStream(res, {
      accepts,
      maxPendingBytes: settings.max_pending_bytes,
      onClose: (reason) => {
        streams.delete(stream);
        unsubscribe();
        if (reason === 'slow')
          request.log.warn(
            { pending: res.writableLength },
            'event stream closed: the client does not read fast enough',
          );
      },
    });
    streams.add(stream);
    const unsubscribe = hub.subscribe(stream);

    const lastEventId = request.headers['last-event-id'];
    let head = `retry: ${RETRY_MS}\n`;
    if (typeof lastEventId === 'string' && lastEventId !== '') {
      const replay = hub.since(lastEventId);
      if (replay.kind === 'reset')
        head += `event: reset\nid: ${replay.latest}\ndata: ${JSON.stringify({ reason: 'the events since Last-Event-ID are no longer held: reload' })}\n\n`;
      else
        head += `\n${replay.events
          .filter(accepts)
          .map((event) => event.frame)
          .join('')}`;
    } else {
      // an id without data sets the browser's Last-Event-ID without firing an event: a reconnect
      // after a quiet spell then replays what it missed
      head += `id: ${hub.latestId}\n\n`;
    }
    stream.write(head);
  }
}

/** The HTTP route, in its own scope; `open` serves one stream. */
async function routes(
  parent: FastifyInstance,
  { open }: { open: (request: FastifyRequest, reply: FastifyReply, types: string | undefined) => void },
): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  scope.get(
    '/api/events',
    {
      config: { auth: 'config', streaming: true },
      schema: {
        tags: ['events'],
        summary:
          'Server-Sent Events stream of changes (object, provider, invalid_file, upstream, live, diagnosis, certificate; job, container, backup, decision, image_update with an operations token)',
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: {
            description: '`text/event-stream`: `event:`, `id:`, `data:` (JSON) per event; a comment line every 15 s',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
          401: ErrorBody,
          403: ErrorBody,
          422: ErrorBody,
        },
      },
    },
    (request, reply) => open(request, reply, request.query.types),
  );
}

export default fp(events, {
  name: 'events',
  dependencies: ['auth'],
  decorators: { fastify: ['config', 'store', 'lifecycle'] },
});
