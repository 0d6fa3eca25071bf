/** A real SSE reader for tests: node:http GET, frames parsed as a browser's EventSource would. */
import http from 'node:http';
import { waitFor } from '../helpers/wait.ts';

export interface SseEvent {
  event: string;
  id: string | null;
  data: string;
}

export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Dispatched events (frames with data), in order. */
  events: SseEvent[];
  /** Comment lines seen (without the leading colon). */
  comments: string[];
  /** The last `id:` seen, as the browser's lastEventId. */
  lastEventId: string | null;
  ended: boolean;
  /** Resolves with the first event (from `from` on) that matches. */
  next(match: (event: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  close(): void;
}

export interface SseOptions {
  headers?: Record<string, string>;
}

/** Opens `url` and resolves once the response head arrived (any status). */
export function openSse(url: string, options: SseOptions = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/event-stream', ...options.headers } }, (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      let frame: SseEvent = { event: 'message', id: null, data: '' };
      let hasData = false;
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        comments: [],
        lastEventId: null,
        ended: false,
        next: (match, timeoutMs = 10_000, from = 0) => waitFor(() => client.events.slice(from).find(match), timeoutMs),
        close: () => request.destroy(),
      };
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (hasData) client.events.push({ ...frame, data: frame.data.replace(/\n$/, '') });
            frame = { event: 'message', id: null, data: '' };
            hasData = false;
          } else if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
          else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') frame.event = value;
            else if (field === 'data') {
              frame.data += `${value}\n`;
              hasData = true;
            } else if (field === 'id') {
              frame.id = value;
              client.lastEventId = value;
            }
          }
        }
      });
      res.on('end', () => {
        client.ended = true;
      });
      res.on('close', () => {
        client.ended = true;
      });
      res.on('error', () => {
        client.ended = true;
      });
      resolve(client);
    });
    request.on('error', reject);
  });
}
