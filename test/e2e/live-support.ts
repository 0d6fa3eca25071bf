/**
 * Live status and diagnosis (API.md §4.19) end to end: a stack whose Stack Manager has the test
 * Traefik as its `traefik` data source from the start (the instance the checker reads), checks
 * 1 s after each generation and every second, and an `/api/events` stream opened before anything
 * changes; helpers that wait for a resource's live state and for findings.
 */
import type { ExecutionContext } from 'ava';
import { openSse, type SseClient, type SseEvent } from '../events/sse-client.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import type { TraefikOptions } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

/** The checker's settings here: Traefik polls every 1 s, so a check 1 s after a generation sees it. */
export const LIVE = { settle_s: 1, interval_s: 1 };

export interface LiveStack extends Stack {
  events: SseClient;
}

export interface Finding {
  id: string;
  severity: 'error' | 'warning' | 'info';
  kind: string;
  message: string;
  resources: string[];
  middlewares: string[];
  fix: string;
}

export async function startLiveStack(
  t: ExecutionContext,
  options: {
    backends: string[];
    resources: Array<{ id: number; name: string; host: string; backends: string[] }>;
    traefik?: Partial<TraefikOptions>;
    config?: Record<string, unknown>;
  },
): Promise<LiveStack> {
  const stack = await startStack(t, {
    ...options,
    config: { live: LIVE, ...options.config },
    traefikSource: true,
  });
  const events = await openSse(`${stack.sm.base}/api/events?types=live,diagnosis`);
  t.teardown(() => events.close());
  if (events.status !== 200) throw new Error(`GET /api/events: ${events.status}`);
  return { ...stack, events };
}

/** GET /api/resources/:id `live`. */
export async function liveOf(stack: Stack, id: string): Promise<any> {
  const reply = await stack.sm.call('GET', `/api/resources/${id}`);
  if (reply.status !== 200) throw new Error(`GET /api/resources/${id}: ${reply.status} ${reply.text}`);
  return reply.json.live;
}

/**
 * Waits until the resource's live state is `state` (and `check` holds, when given); returns its
 * `live` and the seconds since `since` (the change that should lead there).
 */
export async function waitForLive(
  stack: Stack,
  id: string,
  state: string,
  since: number,
  check: (live: any) => boolean = () => true,
): Promise<{ live: any; seconds: number }> {
  let last: unknown;
  try {
    const live = await waitFor(
      async () => {
        last = await liveOf(stack, id);
        return (last as any)?.state === state && check(last) ? last : null;
      },
      5_000,
      100,
    );
    return { live, seconds: (Date.now() - since) / 1000 };
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${id} live ${JSON.stringify(last)}`, { cause: error });
  }
}

/** GET /api/proxy-config/diagnosis. */
export async function diagnosis(stack: Stack): Promise<any> {
  const reply = await stack.sm.call('GET', '/api/proxy-config/diagnosis');
  if (reply.status !== 200) throw new Error(`GET /api/proxy-config/diagnosis: ${reply.status} ${reply.text}`);
  return reply.json;
}

/** Waits until the diagnosis holds a finding that `match`es; returns it and the seconds since `since`. */
export async function waitForFinding(
  stack: Stack,
  match: (finding: Finding) => boolean,
  since: number,
  timeoutMs = 5_000,
): Promise<{ finding: Finding; seconds: number }> {
  let last: unknown;
  try {
    const finding = await waitFor(
      async () => {
        last = await diagnosis(stack);
        return ((last as any).findings as Finding[]).find(match) ?? null;
      },
      timeoutMs,
      100,
    );
    return { finding, seconds: (Date.now() - since) / 1000 };
  } catch (error) {
    throw new Error(`${(error as Error).message}: diagnosis ${JSON.stringify(last)}`, { cause: error });
  }
}

/** Waits until the diagnosis no longer holds the finding `id`; returns the seconds since `since`. */
export async function waitForCleared(stack: Stack, id: string, since: number): Promise<number> {
  let last: unknown;
  try {
    await waitFor(
      async () => {
        last = await diagnosis(stack);
        return !((last as any).findings as Finding[]).some((finding) => finding.id === id);
      },
      5_000,
      100,
    );
    return (Date.now() - since) / 1000;
  } catch (error) {
    throw new Error(`${(error as Error).message}: diagnosis ${JSON.stringify(last)}`, { cause: error });
  }
}

/** The event's JSON data. */
export const data = (event: SseEvent): any => JSON.parse(event.data);

/** A `diagnosis` event's finding id (the event carries the finding, or its id). */
export const findingId = (event: SseEvent): string => {
  const finding = data(event).finding;
  return typeof finding === 'string' ? finding : finding?.id;
};
