/**
 * Keeps one `process.nextTick` tick object alive for the life of the process (issue 11).
 *
 * Node builds every tick object from one object literal with computed keys
 * (`{ [async_id_symbol]: id, [trigger_async_id_symbol]: trigger, callback, args }`), and V8 keeps
 * the feedback of such a literal as a single map per key. Tick objects live for microseconds, and
 * their hidden classes (maps) are reachable only through weak transitions: a full GC that runs while
 * no tick object is alive frees them, the next `nextTick` builds new ones, and V8's
 * `Runtime_DefineKeyedOwnPropertyInLiteral` finds a map that is not the one it recorded and marks the
 * literal megamorphic, for good. From then on every `nextTick` (several per HTTP request: Node's
 * streams call it in `emitReadable`, `endReadable`, `resume`, `onwrite`) defines its four properties
 * through the V8 runtime: ≈ 4 µs of user CPU per provider request, in a third to a half of the
 * server processes, depending on when their full GCs happened to fall (session 11: nextTick's feedback
 * vector was MEGAMORPHIC in exactly the slow processes, 5 of 20 unpinned, 0 of 16 pinned). A live
 * tick object holds its map and, through the map's back pointers, the whole chain: the maps never
 * change and the literal stays monomorphic. Node 20, 22 and 24 alike; costs one small object.
 */
import { executionAsyncResource } from 'node:async_hooks';

let pinned: object | null = null;

/**
 * Resolves with the kept tick object (the same one on every call). Inside a `nextTick` callback
 * Node's execution resource is the tick object itself.
 */
export function pinTickObjectShape(): Promise<object> {
  return new Promise((resolve) =>
    process.nextTick(() => {
      pinned ??= executionAsyncResource();
      resolve(pinned);
    }),
  );
}
