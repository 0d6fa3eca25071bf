/**
 * Hot reload (API.md §6): one listening socket, app instances behind it. A reload builds a new
 * instance; once it is ready it takes every new request, the old one finishes its in-flight
 * requests (up to 10 s) and closes. If the new instance cannot be built, the old one stays.
 * WebSocket upgrades go to the current instance only; the old one closes its WebSockets with 1012
 * (it sees `app.lifecycle.restarting`).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import { retire } from './types.ts';
import type { FastRoutes } from './fast-routes.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
type ServerFactory = NonNullable<FastifyServerOptions['serverFactory']>;

/** Builds one app instance for a generation, wiring it to the shared server through serverFactory. */
export type InstanceBuilder = (generation: number, serverFactory: ServerFactory) => Promise<FastifyInstance>;

interface Instance {
  app: FastifyInstance;
  handler: Handler;
  /** the `upgrade` listeners the instance's plugins (@fastify/websocket) added to the shared server */
  upgrade: UpgradeListener[];
  /** routes answered before Fastify (core/fast-routes.ts); null for an app not made by buildApp */
  fast: FastRoutes | null;
  inFlight: number;
  drained: (() => void) | null;
}

/** Timeouts of the shared server, as Fastify would set them on a server of its own. */
export interface ServerTimeouts {
  /** ms to receive a whole request (headers and body); 0: none */
  requestTimeout?: number;
  /** ms an idle keep-alive connection stays open */
  keepAliveTimeout?: number;
  /** how often Node checks requestTimeout (its default: 30 s) */
  checkIntervalMs?: number;
}

/** Fastify's default keepAliveTimeout. */
export const KEEP_ALIVE_MS = 72_000;

/** How long an outgoing instance may keep serving its in-flight requests. */
export const DRAIN_MS = 10_000;

export class AppHost {
  readonly server: http.Server;
  private current: Instance | null = null;
  private generationCounter = 0;
  private reloading: Promise<boolean> | null = null;
  private closing = false;
  /**
   * Sockets handed over by an `upgrade` event and still open. Node's HTTP server no longer tracks
   * them (closeAllConnections skips them) but server.close() waits for them: an upgrade the app
   * refused (401 before @fastify/websocket takes it) whose client keeps the socket held shutdown
   * for the whole grace period (10 s, then exit 1).
   */
  private readonly upgraded = new Set<Duplex>();

  /**
   * `starting` answers while no instance exists yet (the first build): the server can listen before
   * the app is built and serve what is known without it (core/early-server.ts).
   */
  constructor(
    private readonly build: InstanceBuilder,
    private readonly logger: FastifyBaseLogger,
    private readonly starting?: Handler,
    timeouts: ServerTimeouts = {},
  ) {
    // Fastify applies its timeouts only to servers it creates, not to a serverFactory's: the shared
    // server takes them here (server.request_timeout_ms; Fastify's 72 s keep-alive, which outlives
    // Traefik's 5 s polls and Go's 90 s idle connections, where Node's own 5 s races them)
    this.server = http.createServer(
      {
        requestTimeout: timeouts.requestTimeout ?? 0,
        keepAliveTimeout: timeouts.keepAliveTimeout ?? KEEP_ALIVE_MS,
        ...(timeouts.checkIntervalMs ? { connectionsCheckingInterval: timeouts.checkIntervalMs } : {}),
      },
      (req, res) => this.dispatch(req, res),
    );
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.dispatchUpgrade(req, socket, head),
    );
  }

  get generation(): number {
    return this.generationCounter;
  }

  get app(): FastifyInstance | null {
    return this.current?.app ?? null;
  }

  /** Builds the first instance (errors propagate: a server that cannot start must not listen). */
  async start(): Promise<FastifyInstance> {
    this.current = await this.buildInstance(1);
    return this.current.app;
  }

  /** Builds a new instance and swaps it in; false (old instance kept) when the build fails. */
  reload(): Promise<boolean> {
    if (this.closing) return Promise.resolve(false);
    // reloads never overlap: a change during a reload is picked up by the next one
    this.reloading ??= this.swap().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  /** Closes the current instance and the socket. */
  async close(): Promise<void> {
    this.closing = true; // a reload asked for from now on is refused, one under way finishes first
    await this.reloading;
    const instance = this.current;
    this.current = null;
    // the socket stops accepting now, but closes only once every connection has ended: upgraded
    // ones (WebSockets) end when the app closes them, so the app is closed before that is awaited
    const serverClosed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (instance) await this.retire(instance, false);
    // close() only ends idle keep-alive connections, and Node counts a connection that has not sent
    // a request yet (a browser's preconnect, a TCP probe, a load generator's last reconnect) as
    // waiting for its headers, not idle: it would hold the socket open until the client leaves.
    // The drain is over, so whatever is left goes now.
    this.server.closeAllConnections();
    // the app has closed its WebSockets (1001): an upgraded socket still open is one no WebSocket owns
    for (const socket of this.upgraded) socket.destroy();
    await serverClosed;
  }

  private async swap(): Promise<boolean> {
    const next = this.generationCounter + 1;
    let fresh: Instance;
    try {
      fresh = await this.buildInstance(next);
    } catch (err) {
      this.logger.error({ err, generation: next }, 'reload failed: the running instance keeps serving');
      return false;
    }
    const old = this.current;
    this.current = fresh;
    this.logger.info({ generation: next }, 'reloaded: the new instance serves new requests');
    if (old) await this.retire(old, true);
    return true;
  }

  private async buildInstance(generation: number): Promise<Instance> {
    let handler: Handler | null = null;
    const before = new Set(this.server.listeners('upgrade'));
    const app = await this.build(generation, ((fastifyHandler: Handler) => {
      handler = fastifyHandler;
      return this.server;
    }) as ServerFactory);
    try {
      await app.ready();
    } catch (err) {
      await app.close().catch(() => undefined);
      throw err;
    }
    if (!handler) throw new Error('the app did not use the server factory');
    // the instance's own upgrade listeners come off the shared server: dispatchUpgrade calls them
    // while the instance is current, so an upgrade during a reload reaches one instance, not both
    const upgrade = this.server.listeners('upgrade').filter((listener) => !before.has(listener)) as UpgradeListener[];
    for (const listener of upgrade) this.server.removeListener('upgrade', listener);
    this.generationCounter = generation;
    return { app, handler, upgrade, fast: app.fastRoutes ?? null, inFlight: 0, drained: null };
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    const instance = this.current;
    if (!instance && this.starting && !this.closing && this.generationCounter === 0) {
      this.starting(req, res);
      return;
    }
    if (!instance) {
      res
        .writeHead(503, { 'content-type': 'application/json; charset=utf-8' })
        .end('{"id":"unhealthy","message":"the server is shutting down"}');
      return;
    }
    // a fast route answers synchronously: nothing stays in flight for a drain to wait on
    if (instance.fast?.serve(req, res)) return;
    instance.inFlight++;
    res.once('close', () => {
      instance.inFlight--;
      if (instance.inFlight === 0) instance.drained?.();
    });
    instance.handler(req, res);
  }

  private dispatchUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    const listeners = this.current?.upgrade ?? [];
    if (listeners.length === 0) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    for (const listener of listeners) listener(req, socket, head);
  }

  /**
   * Lets an instance finish the requests it started (≤ DRAIN_MS), then closes it. A replaced one
   * (`restarting`) closes its WebSockets with 1012 "service restart" (API.md §4.13, §6), a shut
   * down one with 1001. Endless responses (SSE) end first (`lifecycle.retiring`).
   */
  private async retire(old: Instance, restarting: boolean): Promise<void> {
    old.app.lifecycle.restarting = restarting;
    retire(old.app.lifecycle);
    if (old.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DRAIN_MS);
        old.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await old.app.close().catch((err) => this.logger.error({ err }, 'closing the previous instance failed'));
  }
}
