/**
 * A client that keeps sending requests through Traefik while a test disturbs the provider (faults
 * of the upstream, a Stack Manager restart) and records every answer, so a test can assert that
 * no request in the whole window met anything but the expected status (no 404 window).
 */
import type { Traefik, TraefikRequest } from './traefik.ts';

export interface LoopAnswer {
  /** ms since the loop started */
  at: number;
  host: string;
  entryPoint: string;
  /** what this request should get (200 unless the loop was told otherwise) */
  expected: number;
  /** HTTP status, or 0 for a request that failed (connection refused, reset, timeout) */
  status: number;
  error?: string;
}

export interface ClientLoop {
  answers: LoopAnswer[];
  /** Answers so far whose status is not their request's expected one. */
  unexpected(): LoopAnswer[];
  /** Stops after the requests in flight and returns every answer. */
  stop(): Promise<LoopAnswer[]>;
}

/**
 * One sequential request loop per entry of `requests` (each its own connection per request, as
 * `traefik.request` does), running until `stop()`; `expected` is the status each should get
 * (default 200, e.g. 302 for Pangolin's `-redirect` router on `web`).
 */
export function clientLoop(traefik: Traefik, requests: Array<TraefikRequest & { expected?: number }>): ClientLoop {
  const answers: LoopAnswer[] = [];
  const started = performance.now();
  let running = true;
  const loops = requests.map(async ({ expected = 200, ...request }) => {
    const seen = { host: request.host, entryPoint: request.entryPoint ?? 'web', expected };
    while (running) {
      const at = Math.round(performance.now() - started);
      try {
        const reply = await traefik.request(request);
        answers.push({ at, ...seen, status: reply.status });
      } catch (error) {
        answers.push({ at, ...seen, status: 0, error: (error as Error).message });
      }
      // yield to timers between requests: the loop must not starve the test's own waits
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
  return {
    answers,
    unexpected: () => answers.filter((answer) => answer.status !== answer.expected),
    async stop() {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}
