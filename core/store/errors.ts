/**
 * What the store reports to its callers when a write cannot happen. The store knows no HTTP: the
 * root error handler (core/errors/handler.ts) renders each kind as its API error.
 */
export type StoreErrorKind =
  /** the object's version is not the one the caller expected (WriteOptions.expect) */
  | 'version_conflict'
  /** create() of an id that is taken */
  | 'already_exists'
  /** an id that does not match the collection's id pattern */
  | 'invalid_id'
  /** cluster mode: the replication log (etcd) cannot be reached, so nothing was written */
  | 'replica_unavailable';

export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly rule?: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/** Whether `err` is a store error of that kind. */
export const isStoreError = (err: unknown, kind: StoreErrorKind): err is StoreError =>
  err instanceof StoreError && err.kind === kind;
