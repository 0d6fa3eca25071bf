/**
 * Route schemas compile on first use or when warmed (core/lazy-compile.ts), and the app still
 * validates and serialises exactly as before: the first request of a route compiles its schemas.
 */
import test from 'ava';
import type { FastifyBaseLogger } from 'fastify';
import { LazyCompiles } from '../../core/lazy-compile.ts';
import { build } from '../helpers/build.ts';

const logger = () => {
  const errors: { obj: object; msg: string }[] = [];
  const log = { error: (obj: object, msg: string) => errors.push({ obj, msg }) } as unknown as FastifyBaseLogger;
  return { log, errors };
};

test('a deferred function compiles once, on its first use', (t) => {
  const lazy = new LazyCompiles();
  let compiled = 0;
  const get = lazy.defer('GET /x body', () => {
    compiled++;
    return (n: number) => n * 2;
  });
  t.is(compiled, 0);
  t.is(lazy.pending, 1);
  t.is(get()(2), 4);
  t.is(get()(5), 10);
  t.is(compiled, 1);
  t.is(lazy.pending, 0);
});

test('warming compiles what is left and logs a schema that does not compile', async (t) => {
  const lazy = new LazyCompiles();
  const { log, errors } = logger();
  const good = lazy.defer('GET /good body', () => () => 'ok');
  lazy.defer('GET /bad body', () => {
    throw new Error('strict mode: unknown keyword');
  });
  t.is(lazy.pending, 2);
  await lazy.warm(log, () => false);
  t.is(lazy.pending, 0);
  t.is(good()(), 'ok');
  t.is(errors.length, 1);
  t.like(errors[0]!.obj, { schema: 'GET /bad body' });
});

test('the app validates bodies and queries on the first request of a route, with the usual 422', async (t) => {
  const app = await build(t);
  const bad = await app.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: { name: 5, type: 'headers', config: {} },
  });
  t.is(bad.statusCode, 422);
  t.is(bad.json().id, 'validation_failed');
  t.regex(bad.json().message, /name/);
  const good = await app.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: { name: 'Lazy', type: 'headers', config: { customRequestHeaders: { 'X-A': 'b' } } },
  });
  t.is(good.statusCode, 201, good.body);
  t.is(good.json().id, 'lazy');
});
