/**
 * Route schemas are compiled when a route first needs them, not while the app is built (issue 11):
 * compiling the Ajv validators and fast-json-stringify serializers of every route took about a
 * second of each start, before the app could serve anything. What is still uncompiled once the app
 * has been ready for a while is compiled in the background, one schema per event-loop turn, so the
 * first request of a route seldom pays for it and a schema that does not compile shows up in the
 * log soon after startup.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

/** Background compilation starts this long after `ready`: the first discovery sync goes first. */
const WARM_DELAY_MS = 3_000;

interface Pending {
  what: string;
  compile: () => unknown;
}

/** The schemas of one app that are not compiled yet. */
export class LazyCompiles {
  readonly #pending = new Set<Pending>();

  /**
   * A getter of the compiled function: it compiles on its first call (or when warmed) and returns
   * the same function from then on. `what` names the route and part for the log.
   */
  defer<F>(what: string, compile: () => F): () => F {
    let compiled: F | undefined;
    const entry: Pending = {
      what,
      compile: () => {
        if (compiled === undefined) {
          compiled = compile();
          this.#pending.delete(entry);
        }
        return compiled;
      },
    };
    this.#pending.add(entry);
    return () => compiled ?? (entry.compile() as F);
  }

  get pending(): number {
    return this.#pending.size;
  }

  /** Compiles what is left, one per event-loop turn, until done or `stopped()`; errors are logged. */
  async warm(log: FastifyBaseLogger, stopped: () => boolean): Promise<void> {
    for (const entry of [...this.#pending]) {
      if (stopped()) return;
      try {
        entry.compile();
      } catch (err) {
        this.#pending.delete(entry);
        log.error({ err, schema: entry.what }, 'a route schema does not compile; its requests will fail');
      }
      await nextTurn();
    }
  }

  /** Warms `scope`'s schemas in the background a few seconds after it is ready; stops when it closes. */
  warmAfterReady(scope: FastifyInstance): void {
    let closed = false;
    let timer: NodeJS.Timeout | null = null;
    scope.addHook('onReady', async () => {
      timer = setTimeout(() => void this.warm(scope.log, () => closed), WARM_DELAY_MS);
      timer.unref();
    });
    scope.addHook('onClose', async () => {
      closed = true;
      if (timer) clearTimeout(timer);
    });
  }
}

/**
 * Fastify's own serializer factory (fast-json-stringify, the same options and shared schemas), each
 * route's serializer compiled on its first response or when warmed.
 */
export function lazySerializers(lazy: LazyCompiles): SerializerFactory {
  const eager = SerializerSelector();
  return (externalSchemas, options) => {
    const compileFor = eager(externalSchemas, options);
    return (route) => {
      const serializer = lazy.defer(`${route.method} ${route.url} response ${route.httpStatus}`, () =>
        compileFor(route),
      );
      return (doc) => serializer()(doc);
    };
  };
}
