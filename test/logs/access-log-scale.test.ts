/**
 * Access-log stats at scale (issue 11): percentiles from the sketch against exact values, totals
 * against the shared generator's --stats, the event loop answering during a large scan, and the
 * per-file result cache.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { build, tempDir } from '../helpers/build.ts';
import { fixture } from '../helpers/shared.ts';
import { EXACT_LIMIT, LatencyQuantiles, RELATIVE_ACCURACY } from '../../plugins/logs/latency-quantiles.ts';
import { seededRandom } from '../helpers/random.ts';

const run = promisify(execFile);
const GENERATOR = fixture('access-logs', 'gen-access-log.mjs');
type Stats = Record<string, any>;

const nearestRank = (sorted: Float64Array, p: number) => sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1];

test('percentiles past the exact limit stay within the documented relative error of the exact nearest rank', (t) => {
  const quantiles = new LatencyQuantiles();
  const values = new Float64Array(4 * EXACT_LIMIT);
  // heavy-tailed like real latencies: most fast, a few very slow; deterministic
  const random = seededRandom(7);
  for (let i = 0; i < values.length; i++) {
    const u = random();
    values[i] = u < 0.9 ? 1 + u * 50 : 100 + (u - 0.9) * 1e6;
    quantiles.add(values[i]);
  }
  const sorted = values.slice().sort();
  const ps = [50, 90, 95, 99];
  const estimated = quantiles.percentiles(ps);
  ps.forEach((p, i) => {
    const exact = nearestRank(sorted, p);
    t.true(Math.abs(estimated[i]! - exact) <= RELATIVE_ACCURACY * exact, `p${p}: ${estimated[i]} vs exact ${exact}`);
  });
  t.is(quantiles.max, sorted[sorted.length - 1]);
});

test('below the exact limit percentiles are the exact nearest rank', (t) => {
  const quantiles = new LatencyQuantiles();
  for (let v = 1; v <= 1000; v++) quantiles.add(v);
  t.deepEqual(quantiles.percentiles([50, 99]), [500, 990]);
});

test("stats of 100,000 generated lines match the generator's --stats; a repeat is cached until the file changes", async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  await run(process.execPath, [GENERATOR, '--format', 'json', '--lines', '100000', '--seed', '3', '--out', file]);
  const { stdout } = await run(process.execPath, [GENERATOR, '--stats', file], { maxBuffer: 16 << 20 });
  const expected = Object.entries(JSON.parse(stdout) as Record<string, Stats>).find(([k]) => k !== 'definitions')![1];
  const app = await build(t, { config: { auth: { mode: 'off' }, logs: { proxy_access_log: file } } });
  const first = (await app.inject({ method: 'GET', url: '/api/logs/proxy/advanced?top=5' })).json();
  t.is(first.requests, expected.totalRequests);
  t.deepEqual(first.status_classes, expected.statusClasses);
  t.is(first.bytes_sent, expected.bytesSent);
  t.deepEqual(
    first.top_ips.map((e: Stats) => [e.value, e.count]),
    expected.topIPs.map((e: Stats) => [e.ip, e.requests]),
  );
  for (const p of ['p50', 'p99'] as const) {
    t.true(
      Math.abs(first.latency_ms[p] - expected.latencyMs[p]) <= RELATIVE_ACCURACY * expected.latencyMs[p],
      `${p}: ${first.latency_ms[p]} vs ${expected.latencyMs[p]}`,
    );
  }
  t.is(first.latency_ms.max, expected.latencyMs.max);

  const again = (await app.inject({ method: 'GET', url: '/api/logs/proxy/advanced?top=5' })).json();
  t.deepEqual(again, first);
  // an appended line changes size and mtime: a new scan counts it
  const last = (await readFile(file, 'utf8')).trimEnd().split('\n').pop()!;
  await appendFile(file, `${last}\n`);
  const changed = (await app.inject({ method: 'GET', url: '/api/logs/proxy/advanced?top=5' })).json();
  t.is(changed.requests, expected.totalRequests + 1);
});

test('GET /api/health answers while a large access log is being scanned', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  // ≈ 400,000 CLF lines (the 200-line sample repeated): seconds of parsing
  const sample = await readFile(fixture('access-logs', 'sample.clf.log'), 'utf8');
  await writeFile(file, sample.repeat(2000));
  const app = await build(t, { config: { auth: { mode: 'off' }, logs: { proxy_access_log: file } } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  let statsDone = false;
  const stats = fetch(`${base}/api/logs/proxy/advanced`).then(async (res) => {
    statsDone = true;
    return { status: res.status, body: (await res.json()) as Stats };
  });
  const health = await fetch(`${base}/api/health`);
  t.is(health.status, 200);
  t.false(statsDone, 'health answered before the scan finished');
  const result = await stats;
  t.is(result.status, 200);
  t.is(result.body.requests, 400_000);
});
