/**
 * The mTLS group's write queue: every change (CA, switch, settings, clients, CRL) runs one after
 * another, so a check and the write it guards see the same state and the daily CRL re-sign never
 * interleaves with a revocation.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `work` after everything queued before it (a failed item does not stop the next). */
  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
