/**
 * One EventSource on GET /api/events (API.md §4.17) shared by every screen: screens subscribe to
 * event types and reload what they show, instead of polling. The token goes as ?access_token=
 * because EventSource cannot send headers.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { Job } from '../api/types';
import { currentToken } from './token';

export type LiveEventType = 'object' | 'provider' | 'invalid_file' | 'upstream' | 'job' | 'container' | 'backup' | 'live' | 'diagnosis' | 'certificate' | 'reset';
export interface LiveEvent {
  type: LiveEventType;
  data: Record<string, unknown>;
  receivedAt: number;
}
type Listener = (event: LiveEvent) => void;

/** A `job` event carries the whole Job of GET /api/jobs/:id (API.md §4.17), typed from the generated schema. */
export function jobOf(event: LiveEvent): Job | null {
  return event.type === 'job' && typeof event.data.id === 'string' ? (event.data as unknown as Job) : null;
}

// `live` {resource, state, previous} and `diagnosis` {finding, action}: what Traefik runs (§4.19)
// `certificate` {cn, not_after, days_left, threshold, source}: an expiry threshold reached (Certificates screen)
const TYPES: LiveEventType[] = ['object', 'provider', 'invalid_file', 'upstream', 'job', 'container', 'backup', 'live', 'diagnosis', 'certificate', 'reset'];
const listeners = new Set<Listener>();
const stateListeners = new Set<(state: string) => void>();
let source: EventSource | null = null;
let state: 'connecting' | 'live' | 'offline' = 'offline';

function setState(next: typeof state): void {
  state = next;
  for (const listener of stateListeners) listener(next);
}

/** Opens (or re-opens, after a token change) the stream. EventSource reconnects by itself with Last-Event-ID. */
export function connectEvents(): void {
  source?.close();
  const token = currentToken();
  const url = '/api/events' + (token ? `?access_token=${encodeURIComponent(token)}` : '');
  source = new EventSource(url);
  setState('connecting');
  source.onopen = () => setState('live');
  source.onerror = () => setState(source?.readyState === EventSource.CLOSED ? 'offline' : 'connecting');
  for (const type of TYPES) {
    source.addEventListener(type, (message) => {
      let data: Record<string, unknown> = {};
      try {
        data = JSON.parse((message as MessageEvent<string>).data || '{}');
      } catch {
        // a malformed event is ignored rather than breaking every screen
      }
      const event: LiveEvent = { type, data, receivedAt: performance.now() };
      for (const listener of listeners) listener(event);
    });
  }
}

export function disconnectEvents(): void {
  source?.close();
  source = null;
  setState('offline');
}

export function liveState(): string {
  return state;
}

export function onLiveState(listener: (state: string) => void): () => void {
  stateListeners.add(listener);
  return () => stateListeners.delete(listener);
}

export function onLiveEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Calls `reload` when an event matching `filter` arrives (coalesced over 100 ms: a restore or a
 * discovery sync sends many events at once); a `reset` event always reloads.
 */
export function useLiveReload(filter: (event: LiveEvent) => boolean, reload: () => void): void {
  const latest = useRef({ filter, reload });
  latest.current = { filter, reload };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = onLiveEvent((event) => {
      if (event.type !== 'reset' && !latest.current.filter(event)) return;
      clearTimeout(timer);
      timer = setTimeout(() => latest.current.reload(), 100);
    });
    return () => {
      clearTimeout(timer);
      off();
    };
  }, []);
}

/** Filter for object events of some collections (`middlewares`, `resources`, …). */
export function objectsOf(...collections: string[]): (event: LiveEvent) => boolean {
  return (event) => event.type === 'object' && collections.includes(String(event.data.collection));
}
