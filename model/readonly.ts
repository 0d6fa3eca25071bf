/**
 * Read-only views of stored and generated objects. The provider's caches (the generator's PatchMemo,
 * the serializer's FragmentCache, the schema check's verdicts) are keyed on object identity: they
 * are correct only while nobody changes an object in place (a change makes a new object). These
 * types make the compiler hold that promise where the objects are handed around.
 */
export type DeepReadonly<T> = unknown extends T
  ? T // unknown / any: nothing to say about its shape
  : T extends (...args: never[]) => unknown
    ? T
    : T extends bigint | boolean | number | string | symbol | null | undefined
      ? T
      : T extends ReadonlyArray<infer E>
        ? ReadonlyArray<DeepReadonly<E>>
        : T extends ReadonlyMap<infer K, infer V>
          ? ReadonlyMap<K, DeepReadonly<V>>
          : T extends ReadonlySet<infer E>
            ? ReadonlySet<DeepReadonly<E>>
            : { readonly [K in keyof T]: DeepReadonly<T[K]> };
