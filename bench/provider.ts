/**
 * Benchmark of the Traefik provider endpoint (issue: config provider). Prints figures; not a test.
 *
 *   npm run bench:provider -- [--resources 1000] [--duration 5] [--rounds 3] [--connections 4] [--edits 50]
 *   (--rounds 0 skips the load runs)
 *
 * Builds a stack of N Pangolin routers (a local fake Pangolin on 127.0.0.1) with N middlewares, one
 * assigned to each resource, then measures in one run:
 *  - requests/s and p99 of GET /api/v1/proxy-config vs a bare Fastify route sending the same Buffer,
 *    plain and with Accept-Encoding: gzip (autocannon in a child process, so it has its own core);
 *  - time from writing a middleware YAML file to a changed ETag being served (p50/p95 over E edits);
 *  - regeneration time (generate + serialize + hash), median of 20: after a middleware edit with the
 *    provider's caches, and cold (every router built and serialised);
 *  - RSS of this process.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { createStack, middlewareYaml } from './stack.ts';
import { buildApp } from '../core/app.ts';
import { PROJECT_ROOT } from '../core/config/load.ts';
import { builtinGroups } from '../plugins/index.ts';
import { generateConfig } from '../model/generate/generate.ts';
import { PatchMemo } from '../model/generate/generate-memo.ts';
import { generationInputs } from '../plugins/proxy-config/inputs.ts';
import { etagOf, FragmentCache, serializeJson } from '../plugins/proxy-config/serialize.ts';

const run = promisify(execFile);

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const N = arg('resources', 1000);
const DURATION = arg('duration', 5);
const CONNECTIONS = arg('connections', 4);
const EDITS = arg('edits', 50);
const ROUNDS = arg('rounds', 3);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface LoadResult {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** autocannon in a child process, below saturation (few connections), JSON result parsed. */
async function load(url: string, gzip: boolean): Promise<LoadResult> {
  const cli = path.join(PROJECT_ROOT, 'node_modules', 'autocannon', 'autocannon.js');
  const headers = gzip ? ['-H', 'accept-encoding=gzip'] : [];
  const { stdout } = await run(
    process.execPath,
    [cli, '-j', '-c', String(CONNECTIONS), '-d', String(DURATION), ...headers, url],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const r = JSON.parse(stdout);
  return { rps: Math.round(r.requests.average), p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

async function main(): Promise<void> {
  const stack = await createStack(N);
  const { config, dataDir } = stack;
  try {
    const startBoot = performance.now();
    const app = await buildApp({ config, groups: builtinGroups, logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    await app.resources.started();
    await app.proxyConfig.regenerate();
    const bootMs = performance.now() - startBoot;
    const generation = app.proxyConfig.current()!;
    const appUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1/proxy-config`;

    // regeneration: the full pipeline the provider runs on a change (inputs → generate → JSON → ETag).
    // cold: no memo, no JSON fragments (every router built and serialised); after an edit: memo and
    // fragment cache kept across generations as the provider keeps them, one middleware body changed
    const inputs = generationInputs(app);
    const cold: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      etagOf(serializeJson(generateConfig(inputs()!).config, new FragmentCache()));
      cold.push(performance.now() - t0);
    }
    cold.sort((a, b) => a - b);
    const fragments = new FragmentCache();
    const memo = new PatchMemo();
    etagOf(serializeJson(generateConfig(inputs()!, memo).config, fragments));
    const regen: number[] = [];
    for (let i = 0; i < 20; i++) {
      const input = inputs()!;
      const [first, ...rest] = input.middlewares;
      const edited = { ...input, middlewares: [{ ...first, config: { ...first.config, average: 1000 + i } }, ...rest] };
      const t0 = performance.now();
      etagOf(serializeJson(generateConfig(edited, memo).config, fragments));
      regen.push(performance.now() - t0);
    }
    regen.sort((a, b) => a - b);

    // bare Fastify route with the same bytes (and the same pre-compressed bytes for gzip)
    const plainBody = generation.json.body;
    const gzBody = generation.json.gzip ?? gzipSync(plainBody);
    const bare = Fastify();
    bare.get('/config', async (request, reply) => {
      reply.type('application/json; charset=utf-8');
      if (/gzip/.test(String(request.headers['accept-encoding'] ?? '')))
        return reply.header('content-encoding', 'gzip').send(gzBody);
      return reply.send(plainBody);
    });
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/config`;

    // interleaved rounds, median per target: a drift of the machine (other load, CPU clock) then
    // hits both sides alike instead of whichever ran second
    const rounds: Record<string, LoadResult[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const gzip of [false, true]) {
        const tag = gzip ? 'gzip' : 'plain';
        for (const [target, url] of round % 2 === 0
          ? [
              ['bare', bareUrl],
              ['provider', appUrl],
            ]
          : [
              ['provider', appUrl],
              ['bare', bareUrl],
            ]) {
          (rounds[`${target} ${tag}`] ??= []).push(await load(url, gzip));
        }
      }
    }
    const results: Record<string, LoadResult> = Object.fromEntries(
      Object.entries(rounds).map(([key, list]) => {
        const sorted = [...list].sort((a, b) => a.rps - b.rps);
        return [key, sorted[Math.floor(sorted.length / 2)]];
      }),
    );
    await bare.close();

    // edit → served: rewrite one middleware file, poll the endpoint until the ETag changes
    const edits: number[] = [];
    for (let e = 1; e <= EDITS; e++) {
      const before = app.proxyConfig.current()!.json.etag;
      const i = 1 + ((e * 7919) % N);
      const t0 = performance.now();
      await writeFile(path.join(dataDir, 'middlewares', `rl-${i}.yaml`), middlewareYaml(i, 100 + e));
      for (;;) {
        // conditional, as a cache would poll: 304 while unchanged, so the poll loop itself (in this
        // process) does not download and decompress the whole config every 2 ms
        const res = await fetch(appUrl, { headers: { 'if-none-match': before } });
        await res.arrayBuffer();
        if (res.status === 200 && res.headers.get('etag') !== before) break;
        if (performance.now() - t0 > 10_000) throw new Error('edit not served within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      edits.push(performance.now() - t0);
    }
    edits.sort((a, b) => a - b);
    const rssMb = process.memoryUsage().rss / 1024 / 1024;
    await app.close();

    const fmt = (r: LoadResult) =>
      `${String(r.rps).padStart(7)} req/s  p99 ${String(r.p99).padStart(4)} ms${r.errors || r.non2xx ? `  (errors ${r.errors}, non-2xx ${r.non2xx})` : ''}`;
    const lines = [
      `Stack Manager provider benchmark — ${N} resources, ${N} middlewares, node ${process.version}, ${CONNECTIONS} connections × ${DURATION} s, median of ${ROUNDS} interleaved rounds`,
      `config: ${(plainBody.length / 1024).toFixed(0)} KiB JSON, ${(gzBody.length / 1024).toFixed(0)} KiB gzip; startup (discovery + first generation): ${bootMs.toFixed(0)} ms`,
      ...(ROUNDS > 0
        ? [
            `bare Fastify, plain : ${fmt(results['bare plain'])}`,
            `provider,     plain : ${fmt(results['provider plain'])}   ratio ${(results['provider plain'].rps / results['bare plain'].rps).toFixed(2)}`,
            `bare Fastify, gzip  : ${fmt(results['bare gzip'])}`,
            `provider,     gzip  : ${fmt(results['provider gzip'])}   ratio ${(results['provider gzip'].rps / results['bare gzip'].rps).toFixed(2)}`,
          ]
        : ['load: skipped (--rounds 0)']),
      `edit → served (${EDITS} edits): p50 ${percentile(edits, 50).toFixed(0)} ms, p95 ${percentile(edits, 95).toFixed(0)} ms`,
      `regeneration after a middleware edit (generate + JSON + ETag): median ${percentile(regen, 50).toFixed(1)} ms, min ${regen[0].toFixed(1)} ms`,
      `cold regeneration (no memo, no JSON fragments): median ${percentile(cold, 50).toFixed(1)} ms, min ${cold[0].toFixed(1)} ms`,
      `RSS: ${rssMb.toFixed(0)} MiB`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await stack.close();
  }
}

await main();
