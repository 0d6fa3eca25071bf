/**
 * One open SSE response. Frames go straight to the socket; what the client has not read yet stays
 * in Node's write buffer, and once that passes `maxPendingBytes` the stream is closed (a slow or
 * stalled client must not grow memory without bound). The browser reconnects with Last-Event-ID
 * and gets the missed events from the ring, or `reset`.
 */
import type { ServerResponse } from 'node:http';
import type { BusEvent, Subscriber } from './bus.ts';

export type CloseReason = 'client' | 'slow' | 'shutdown';

export interface SseStreamOptions {
  /** Whether this stream gets the event (type filter and the caller's rights). */
  accepts: (event: BusEvent) => boolean;
  maxPendingBytes: number;
  onClose: (reason: CloseReason) => void;
}

export class SseStream implements Subscriber {
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: SseStreamOptions,
  ) {
    res.once('close', () => this.finish('client'));
  }

  get open(): boolean {
    return !this.closed;
  }

  deliver(event: BusEvent): void {
    if (this.closed || !this.options.accepts(event)) return;
    this.write(event.frame);
  }

  /** Raw SSE text (comments, `retry:`, replayed frames). */
  write(text: string): void {
    if (this.closed) return;
    if (this.res.writableLength > this.options.maxPendingBytes) {
      // drop what is buffered rather than end politely: ending would queue behind it
      this.finish('slow');
      this.res.destroy();
      return;
    }
    this.res.write(text);
  }

  /** Ends the response (shutdown, hot reload): the browser reconnects to the instance now serving. */
  end(): void {
    if (this.closed) return;
    this.finish('shutdown');
    this.res.end();
  }

  private finish(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.options.onClose(reason);
  }
}
