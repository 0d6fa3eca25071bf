/** AnswerCache on its own: single-flight, lifetime on the injected clock, failures not kept, sweep, clear. */
import test from 'ava';
import { AnswerCache, type Outcome } from '../../plugins/proxy/answer-cache.ts';

/** A load the test settles by hand, counting how often it was started. */
function deferredLoad<T>() {
  const state = { calls: 0, settle: (_outcome: Outcome<T>) => {} };
  const load = () => {
    state.calls++;
    return new Promise<Outcome<T>>((resolve) => {
      state.settle = resolve;
    });
  };
  return { state, load };
}

test('concurrent gets of one key share a single load', async (t) => {
  const cache = new AnswerCache(1000, () => 0);
  const { state, load } = deferredLoad<number>();
  const pending = [cache.get('a', load), cache.get('a', load), cache.get('a', load)];
  t.is(state.calls, 1);
  state.settle({ ok: true, value: 42 });
  t.deepEqual(await Promise.all(pending), Array(3).fill({ ok: true, value: 42 }));
});

test('a success is kept for the lifetime measured from when it settled', async (t) => {
  let now = 0;
  const cache = new AnswerCache(1000, () => now);
  const { state, load } = deferredLoad<string>();
  const first = cache.get('a', load);
  now = 500; // a slow request: the lifetime starts when the answer arrives
  state.settle({ ok: true, value: 'one' });
  await first;
  now = 1499;
  t.deepEqual(await cache.get('a', async () => ({ ok: true, value: 'two' })), { ok: true, value: 'one' });
  now = 1500;
  t.deepEqual(await cache.get('a', async () => ({ ok: true, value: 'two' })), { ok: true, value: 'two' });
  t.deepEqual(await cache.get('b', async () => ({ ok: true, value: 'b' })), { ok: true, value: 'b' });
});

test('a failure is shared while pending and dropped once settled; a throwing load becomes a failure', async (t) => {
  const cache = new AnswerCache(1000, () => 0);
  const { state, load } = deferredLoad<number>();
  const both = [cache.get('a', load), cache.get('a', load)];
  state.settle({ ok: false, error: 'Traefik answered HTTP 500' });
  t.deepEqual(await Promise.all(both), Array(2).fill({ ok: false, error: 'Traefik answered HTTP 500' }));
  t.is(state.calls, 1);
  t.is(cache.size, 0);
  t.deepEqual(await cache.get('a', async () => ({ ok: true, value: 1 })), { ok: true, value: 1 });
  const thrown = await cache.get('c', async () => {
    throw new Error('boom');
  });
  t.deepEqual(thrown, { ok: false, error: 'Traefik request failed: boom' });
});

test('expired entries are swept on the next miss and clear() empties the cache', async (t) => {
  let now = 0;
  const cache = new AnswerCache(1000, () => now);
  for (const key of ['a', 'b', 'c']) await cache.get(key, async () => ({ ok: true, value: key }));
  t.is(cache.size, 3);
  now = 2000;
  await cache.get('d', async () => ({ ok: true, value: 'd' }));
  t.is(cache.size, 1);
  cache.clear();
  t.is(cache.size, 0);
  // a load that settles after clear() is not put back
  const { state, load } = deferredLoad<number>();
  const pending = cache.get('e', load);
  cache.clear();
  state.settle({ ok: true, value: 5 });
  t.deepEqual(await pending, { ok: true, value: 5 });
  t.is(cache.size, 0);
});
