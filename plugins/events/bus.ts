/**
 * The in-process event bus (API.md §4.17): numbered events, a bounded replay ring for
 * `Last-Event-ID`, and fan-out to the open SSE streams. Publishing never throws and never waits.
 */
export const EVENT_TYPES = [
  'object',
  'provider',
  'invalid_file',
  'upstream',
  'job',
  'container',
  'backup',
  // live status (§4.19): configuration-visible (class C), so every stream gets them
  'live',
  'diagnosis',
  // certificate expiry (§4.21 certs): `{cn, not_after, days_left, threshold, source}`, class C like live
  'certificate',
  // manual CrowdSec decisions (§4.21 security): `{action: added|deleted|unbanned, value, type, duration, by}`
  'decision',
  // a stack container's image has a newer registry digest (§4.21 containers): once per new digest
  'image_update',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Events of class-O groups: only streams whose token may use operation routes get them. */
export const OPERATION_EVENT_TYPES: ReadonlySet<EventType> = new Set<EventType>([
  'job',
  'container',
  'backup',
  'decision',
  'image_update',
]);

export interface EventBus {
  /** Publish one event (API.md §4.17) to every SSE subscriber allowed to see it; never throws, never blocks. */
  publish(type: EventType, data: object): void;
  /**
   * Hears every published event in-process (notifications, metrics), synchronously after the SSE
   * streams; a listener that throws is logged and does not stop the others. Returns the unsubscribe function.
   */
  listen(listener: EventListener): () => void;
}

/** An in-process listener of the bus: the event's type and its data as published (not serialised). */
export type EventListener = (type: EventType, data: object) => void;

/** One published event with its wire form. */
export interface BusEvent {
  id: number;
  type: EventType;
  /** Only for streams whose caller may use class-O routes. */
  restricted: boolean;
  /** `event:`/`id:`/`data:` lines and the blank line that ends them. */
  frame: string;
}

export interface Subscriber {
  deliver(event: BusEvent): void;
}

export type Replay = { kind: 'events'; events: BusEvent[] } | { kind: 'reset'; latest: number };

interface BusLogger {
  error(obj: object, msg: string): void;
}

export class EventHub implements EventBus {
  private readonly ring: BusEvent[] = [];
  /** Index in `ring` of the oldest event once the ring is full. */
  private start = 0;
  private lastId: number;
  private readonly subscribers = new Set<Subscriber>();
  private readonly listeners = new Set<EventListener>();

  /**
   * `firstId - 1` is the id before the first event. The plugin seeds it from the clock, so an id
   * a browser kept from an earlier run (or a replaced instance) is older than anything here and
   * gets `reset`, instead of being mistaken for an id of this run.
   */
  constructor(
    private readonly capacity: number,
    firstId: number,
    private readonly log: BusLogger,
  ) {
    this.lastId = firstId - 1;
  }

  get latestId(): number {
    return this.lastId;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** `restricted`: class-O content; by default the class-O event types (job, container, backup). */
  publish(type: EventType, data: object, restricted = OPERATION_EVENT_TYPES.has(type)): void {
    try {
      const id = ++this.lastId;
      // JSON never holds a raw newline, so `data:` is one line
      const event: BusEvent = {
        id,
        type,
        restricted,
        frame: `event: ${type}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`,
      };
      if (this.ring.length < this.capacity) this.ring.push(event);
      else {
        this.ring[this.start] = event;
        this.start = (this.start + 1) % this.capacity;
      }
      for (const subscriber of this.subscribers) subscriber.deliver(event);
    } catch (err) {
      this.log.error({ err, type }, 'publishing an event failed');
    }
    for (const listener of this.listeners) {
      try {
        listener(type, data);
      } catch (err) {
        this.log.error({ err, type }, 'an event listener failed');
      }
    }
  }

  listen(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /**
   * The events after `lastEventId`, or `reset` when some of them are no longer held (or the id
   * is not one of this run's: malformed, from an earlier run, or from the future).
   */
  since(lastEventId: string): Replay {
    const seen = /^[0-9]{1,16}$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : Number.NaN;
    const oldest = this.ring.length === 0 ? this.lastId + 1 : this.ring[this.start].id;
    if (!(seen >= oldest - 1 && seen <= this.lastId)) return { kind: 'reset', latest: this.lastId };
    const ordered = [...this.ring.slice(this.start), ...this.ring.slice(0, this.start)];
    return { kind: 'events', events: ordered.filter((event) => event.id > seen) };
  }
}
