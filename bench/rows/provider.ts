/**
 * Row "GET /api/v1/proxy-config saturated" and "server CPU per request": Stack Manager against a bare
 * Fastify route, bare node:http and nginx gzip_static serving the same bytes, all pinned to the server
 * core, wrk -t1 -c10 on the other core, interleaved rounds, medians.
 */
import { request } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import path from 'node:path';
import { createStack } from '../stack.ts';
import {
  CPU_TICK_MS,
  cpuMicros,
  hasCommand,
  median,
  spawnPinned,
  waitFor,
  wrk,
  type WrkResult,
} from '../lib/measure.ts';
import { buildServer, freePort, startServer, waitListening } from '../lib/server.ts';
import type { Row } from './types.ts';

/** Raw bytes of a GET (no decompression), with the response headers. */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), headers: res.headers }));
    })
      .on('error', reject)
      .end();
  });
}

/** datasources.yaml (FORMATS.md) with the given poll interval, written before the server starts. */
function writeSlowPolling(dataDir: string, pangolinUrl: string, pollIntervalS: number): void {
  const at = new Date().toISOString();
  const entry = (type: string, url: string) => ({
    type,
    url,
    skip_tls_verify: false,
    basic_auth: null,
    poll_interval_s: pollIntervalS,
    timeout_ms: 60_000,
    created_at: at,
    updated_at: at,
  });
  writeFileSync(
    path.join(dataDir, 'datasources.yaml'),
    stringify({
      active: 'pangolin',
      sources: { pangolin: entry('pangolin', pangolinUrl), traefik: entry('traefik', 'http://127.0.0.1:9') },
    }),
    { mode: 0o600 },
  );
}

interface Target {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function startReference(
  kind: 'fastify' | 'fastify-headers' | 'http',
  plainFile: string,
  gzFile: string,
  etag?: string,
): Promise<Target> {
  const port = await freePort();
  const child = spawnPinned(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(import.meta.dirname, '..', 'lib', 'bare-server.ts'),
      kind,
      String(port),
      plainFile,
      gzFile,
      ...(etag ? [etag] : []),
    ],
    { quiet: true },
  );
  const url = `http://127.0.0.1:${port}/config`;
  await waitListening(url);
  return {
    name: kind === 'fastify' ? 'bare Fastify' : kind === 'fastify-headers' ? 'Fastify, same headers' : 'bare node:http',
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill();
    },
  };
}

async function startNginx(dir: string): Promise<Target> {
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp; proxy_temp_path ${dir}/tmp; fastcgi_temp_path ${dir}/tmp; uwsgi_temp_path ${dir}/tmp; scgi_temp_path ${dir}/tmp;
  types { application/json json; }
  server {
    listen 127.0.0.1:${port};
    root ${dir}/www;
    location / { gzip_static on; }
  }
}
`,
  );
  mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  const child = spawnPinned('nginx', ['-c', conf, '-g', 'daemon off;'], { quiet: true });
  const url = `http://127.0.0.1:${port}/config.json`;
  await waitListening(url);
  return {
    name: 'nginx gzip_static',
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGQUIT');
    },
  };
}

/**
 * Measured runs per process, variant and round. The kernel's share of a request (the loopback TCP
 * path: 14–16 µs of a 27–32 µs gzip request) settles per set of connections: a run on new
 * connections measured 14–16 µs or 24–28 µs of system CPU per request for the same process,
 * ours and bare Fastify alike (session 10). One run per round sampled that coin toss once.
 */
export const RUNS_PER_ROUND = 3;

/** The run with the median CPU per request. */
function medianRun(runs: WrkResult[]): WrkResult {
  const sorted = [...runs].sort((a, b) => a.cpuUsPerReq - b.cpuUsPerReq);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Unrecorded load per server and variant before its measured runs: gzip (the hot path) longest. */
const WARM_UP_S: Record<string, number> = { plain: 5, gzip: 10, '304': 5 };

interface Captured {
  plain: { body: Buffer };
  gz: { body: Buffer };
  etag: string;
}

/**
 * Starts Stack Manager as `npm start` runs it (compiled, built by the caller) and waits until it
 * serves the full config (plain and gzip) and has settled.
 */
async function startOurs(stack: {
  dataDir: string;
  pangolinUrl: string;
}): Promise<{ target: Target; captured: Captured }> {
  const server = await startServer({ dataDir: stack.dataDir, pangolinUrl: stack.pangolinUrl, entry: 'dist' });
  const url = `${server.base}/api/v1/proxy-config`;
  const target: Target = { name: 'Stack Manager', url, pid: server.pid, stop: server.stop };
  try {
    await waitFor(
      async () => ((await rawGet(url, {})).status === 200 ? true : undefined),
      300_000,
      'the first provider config',
    );
    const plain = await rawGet(url, {});
    // the gzip form is compressed on the thread pool right after a generation: wait until it is served
    const gz = await waitFor(
      async () => {
        const res = await rawGet(url, { 'accept-encoding': 'gzip' });
        return res.headers['content-encoding'] === 'gzip' ? res : undefined;
      },
      60_000,
      'the gzip form',
    );
    // the first sync serves the config before it writes the resource files (1,000 here) and the
    // watcher attaches after the app is ready: measure once that startup work is done
    await waitFor(
      async () => {
        const res = await fetch(`${server.base}/api/proxy-config/status`);
        const status = (await res.json()) as { upstream?: { last_ok_at?: string | null } };
        return status.upstream?.last_ok_at ? true : undefined;
      },
      300_000,
      'the first sync to finish writing',
    );
    await waitFor(
      async () => {
        const from = cpuMicros(server.pid);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return cpuMicros(server.pid) - from < 50_000 ? true : undefined;
      },
      120_000,
      'the server to settle (under 50 ms of CPU per second)',
    );
    return { target, captured: { plain, gz, etag: String(plain.headers.etag) } };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/**
 * Every round runs on fresh processes (ours and each Node reference). A Node process serving this
 * route settles, after its warm-up, in one of two steady states that differ by 15–40% in CPU per
 * request, and stays there: bare Fastify serving a 10 KiB gzip body measured 22–23 µs in 4 of 6
 * processes and 27–30 µs in 2; Stack Manager 29–33 µs in 4 of 6 and 36–45 µs in 2 (session 9). The
 * per-process part was user time (a V8 state where `process.nextTick`'s tick objects are built by the
 * runtime after a full GC freed their maps: our server keeps one alive since session 11,
 * core/tick-shape.ts; the references do not); the per-run part is the kernel's (RUNS_PER_ROUND); README "Performance".
 * One process per server compares two coin tosses; a fresh set per round samples both states for
 * every server, and the per-round figures show which state each round's processes landed in.
 */
export async function providerRow(options: { resources: number; rounds: number; duration: number }): Promise<Row[]> {
  await buildServer();
  const stack = await createStack(options.resources);
  const work = path.dirname(stack.dataDir);
  let targets: Target[] = [];
  const stopAll = async () => {
    for (const target of targets) await target.stop().catch(() => undefined);
    targets = [];
  };
  try {
    // The server polls its upstream every 5 s by default (a 0.5 MB body at 1,000 resources: parsed,
    // hashed, compared), 13–19 ms of CPU per second measured idle at 1,000 resources. That is not
    // request work, yet on a shared machine where a round serves a few hundred requests per second it
    // added tens of µs to each: polls are slowed to hourly for this row, and the idle CPU with the
    // default interval is measured by bench/rss.ts; the idle row below is with hourly polls.
    await writeSlowPolling(stack.dataDir, stack.pangolinUrl, 3600);
    // request headers per variant; the 304 asks with the ETag of the round's own server. Gzip first,
    // on processes that have served nothing else, as Traefik's polls (Go's client always asks for
    // gzip) find them
    const variants = [
      { name: 'gzip', headers: (_etag: string): string[] => ['Accept-Encoding: gzip'] },
      { name: 'plain', headers: (_etag: string): string[] => [] },
      { name: '304', headers: (etag: string) => [`If-None-Match: ${etag}`] },
    ];
    const results = new Map<string, WrkResult[]>();
    let first: Captured | undefined;
    let idleMsPerS = NaN;
    mkdirSync(path.join(work, 'www'), { recursive: true });
    const plainFile = path.join(work, 'www', 'config.json');
    const gzFile = path.join(work, 'www', 'config.json.gz');
    for (let round = 0; round < options.rounds; round++) {
      const ours = await startOurs(stack);
      targets.push(ours.target);
      const { etag } = ours.captured;
      if (first === undefined) {
        first = ours.captured;
        // the server's own CPU without requests (timers, watchers, the hourly poll)
        const idleFrom = cpuMicros(ours.target.pid);
        await new Promise((resolve) => setTimeout(resolve, options.duration * 1000));
        idleMsPerS = (cpuMicros(ours.target.pid) - idleFrom) / 1000 / options.duration;
        writeFileSync(plainFile, first.plain.body);
        writeFileSync(gzFile, first.gz.body);
      } else if (!ours.captured.plain.body.equals(first.plain.body)) {
        throw new Error(`round ${round}: the provider config differs from round 0's (ETag ${etag} vs ${first.etag})`);
      }
      targets.push(await startReference('fastify', plainFile, gzFile));
      targets.push(await startReference('fastify-headers', plainFile, gzFile, etag));
      targets.push(await startReference('http', plainFile, gzFile));
      if (await hasCommand('nginx')) targets.push(await startNginx(work));
      // rotate the order each round, so a drift of the shared machine hits every target alike
      const order = targets.map((_, i) => targets[(i + round) % targets.length]);
      for (const variant of variants) {
        const headers = variant.headers(etag);
        const measured = order.filter(
          (target) =>
            variant.name !== '304' || target.name === 'Stack Manager' || target.name === 'Fastify, same headers',
        );
        for (const target of measured)
          await wrk(target.url, target.pid, { duration: WARM_UP_S[variant.name], headers });
        // several runs per process, each on new connections (a new wrk), interleaved; the run with
        // the median CPU per request stands for the process in this round
        const runs = new Map<Target, WrkResult[]>();
        for (let run = 0; run < RUNS_PER_ROUND; run++)
          for (const target of measured)
            runs.set(target, [
              ...(runs.get(target) ?? []),
              await wrk(target.url, target.pid, { duration: options.duration, headers }),
            ]);
        for (const target of measured) {
          const key = `${target.name}|${variant.name}`;
          results.set(key, [...(results.get(key) ?? []), medianRun(runs.get(target)!)]);
        }
      }
      await stopAll();
    }
    const { plain, gz } = first!;
    const med = (key: string) => {
      const list = results.get(key) ?? [];
      return {
        rps: median(list.map((r) => r.rps)),
        p99: median(list.map((r) => r.p99Ms)),
        cpu: median(list.map((r) => r.cpuUsPerReq)),
        errors: list.reduce((a, r) => a + r.errors, 0),
      };
    };
    /**
     * Median over rounds of ours ÷ the reference's figure in the same round: the two ran back to
     * back, so a drift of the shared machine between rounds cancels out (loopback writes of a
     * 34 KiB body move ±15% from one 5 s run to the next), each round on its own processes.
     */
    const perRound = (variant: string, reference: string, pick: (r: WrkResult) => number) => {
      const ours = results.get(`Stack Manager|${variant}`) ?? [];
      const theirs = results.get(`${reference}|${variant}`) ?? [];
      return ours.map((r, i) => pick(r) / pick(theirs[i]));
    };
    const perRoundCpu = (key: string) => (results.get(key) ?? []).map((r) => r.cpuUsPerReq.toFixed(0)).join(' ');
    /** median user and system µs per request: where a difference lies (our code vs the kernel's TCP path) */
    const split = (key: string) => {
      const list = results.get(key) ?? [];
      return `user ${median(list.map((r) => r.userUsPerReq)).toFixed(1)} + system ${median(list.map((r) => r.sysUsPerReq)).toFixed(1)}`;
    };
    const pairedRatio = (variant: string, reference: string, pick: (r: WrkResult) => number) =>
      median(perRound(variant, reference, pick));
    const rows: Row[] = [];
    const size = `${(plain.body.length / 1024).toFixed(0)} KiB JSON, ${(gz.body.length / 1024).toFixed(0)} KiB gzip`;
    for (const variant of ['plain', 'gzip']) {
      const sm = med(`Stack Manager|${variant}`);
      const bare = med(`bare Fastify|${variant}`);
      const http = med(`bare node:http|${variant}`);
      const same = med(`Fastify, same headers|${variant}`);
      const nginx = med(`nginx gzip_static|${variant}`);
      const refs = [
        `bare Fastify ${(bare.rps / 1000).toFixed(1)}k (p99 ${bare.p99.toFixed(1)} ms)`,
        `Fastify with the same headers ${(same.rps / 1000).toFixed(1)}k (p99 ${same.p99.toFixed(1)} ms)`,
        `bare node:http ${(http.rps / 1000).toFixed(1)}k`,
      ];
      if (results.has(`nginx gzip_static|${variant}`)) refs.push(`nginx ${(nginx.rps / 1000).toFixed(1)}k`);
      const ratio = pairedRatio(variant, 'bare Fastify', (r) => r.rps);
      rows.push({
        measure: `\`GET /api/v1/proxy-config\`, ${variant}, ${options.resources} resources (${size}), saturated`,
        ours: `${(sm.rps / 1000).toFixed(1)}k req/s, p99 ${sm.p99.toFixed(1)} ms${sm.errors ? ` (${sm.errors} errors)` : ''}`,
        reference: refs.join('; '),
        goal: '≥ 0.9× bare Fastify, p99 ≤ 2× bare Fastify',
        verdict: `${ratio.toFixed(2)}×, p99 ${(sm.p99 / bare.p99).toFixed(1)}× ${ratio >= 0.9 && sm.p99 <= 2 * bare.p99 ? '✅' : '❌'} (same headers: ${pairedRatio(variant, 'Fastify, same headers', (r) => r.rps).toFixed(2)}×)`,
      });
      const cpuRatio = pairedRatio(variant, 'bare Fastify', (r) => r.cpuUsPerReq);
      const cpuSame = pairedRatio(variant, 'Fastify, same headers', (r) => r.cpuUsPerReq);
      rows.push({
        measure: `server CPU per request (${variant})`,
        ours: `${sm.cpu.toFixed(0)} µs (per round ${perRoundCpu(`Stack Manager|${variant}`)}; ${split(`Stack Manager|${variant}`)})`,
        reference: `bare Fastify ${bare.cpu.toFixed(0)} µs (per round ${perRoundCpu(`bare Fastify|${variant}`)}; ${split(`bare Fastify|${variant}`)}); Fastify with the same headers ${same.cpu.toFixed(0)} µs; node:http ${http.cpu.toFixed(0)} µs${results.has(`nginx gzip_static|${variant}`) ? `; nginx ${nginx.cpu.toFixed(0)} µs` : ''}`,
        goal: '≤ 1.1× bare Fastify',
        verdict: `${cpuRatio.toFixed(2)}× ${cpuRatio <= 1.1 ? '✅' : '❌'} (same headers: ${cpuSame.toFixed(2)}×; per round: ${perRound(
          variant,
          'bare Fastify',
          (r) => r.cpuUsPerReq,
        )
          .map((ratio) => ratio.toFixed(2))
          .join(' ')})`,
      });
    }
    const notModified = med('Stack Manager|304');
    const bareGzip = med('bare Fastify|gzip');
    const same304 = med('Fastify, same headers|304');
    rows.push({
      measure: '`GET /api/v1/proxy-config` with a matching If-None-Match (304), saturated',
      ours: `${(notModified.rps / 1000).toFixed(1)}k req/s, p99 ${notModified.p99.toFixed(1)} ms, ${notModified.cpu.toFixed(0)} µs CPU/request`,
      reference: `Fastify with the same headers, 304: ${same304.cpu.toFixed(0)} µs; (bare Fastify gzip 200: ${bareGzip.cpu.toFixed(0)} µs)`,
      goal: 'cheaper than a 200',
      verdict: notModified.cpu <= bareGzip.cpu ? '✅' : '❌',
    });
    rows.push({
      measure: 'server CPU while idle (no requests; upstream polled hourly in this row)',
      // /proc counts CPU in clock ticks: below one tick in the window, say so instead of 0
      ours:
        idleMsPerS > 0
          ? `${idleMsPerS.toFixed(1)} ms per second`
          : `< ${(CPU_TICK_MS / options.duration).toFixed(1)} ms per second (no ${CPU_TICK_MS} ms CPU tick in ${options.duration} s)`,
      reference: '–',
      goal: '(context for the rows above)',
      verdict: '–',
    });
    return rows;
  } finally {
    await stopAll();
    await stack.close();
  }
}
