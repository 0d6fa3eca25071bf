/**
 * Config history (API.md §4.24, issue 30): what history costs a write, and how fast a change
 * becomes a commit. Prints figures; not a test.
 *
 *   npx tsx bench/history.ts [--writes 200] [--batch 100]
 *
 * - Write latency: `--writes` sequential PUTs of middlewares over a real socket (127.0.0.1), p50/p99,
 *   once with history off and once on (same app build, same data); history runs off the request
 *   path, so the two should match within noise.
 * - Commit latency: one write, then the time until GET /api/history/status shows its commit
 *   (the batch window, 1 s by default, is most of it).
 * - A batch: `--batch` concurrent writes, then the time until they are committed, and how many
 *   commits they made (one per batch window).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../core/app.ts';
import { builtinGroups } from '../plugins/index.ts';
import { testConfig } from '../test/helpers/build.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const writes = arg('writes', 200);
const batch = arg('batch', 100);

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function withApp<R>(
  history: boolean,
  fn: (base: string, app: Awaited<ReturnType<typeof buildApp>>) => Promise<R>,
): Promise<R> {
  const root = await mkdtemp(path.join(tmpdir(), 'sm-bench-history-'));
  const app = await buildApp({
    config: testConfig(path.join(root, 'data'), {
      auth: { mode: 'off' },
      history: { enabled: history, batch_ms: 1000 },
    }),
    groups: builtinGroups,
    logger: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    return await fn(`http://127.0.0.1:${(app.server.address() as { port: number }).port}`, app);
  } finally {
    await app.close();
    await rm(root, { recursive: true, force: true });
  }
}

const put = async (base: string, id: string, average: number) => {
  const response = await fetch(`${base}/api/middlewares/${id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: id, type: 'rateLimit', config: { average, burst: 50 } }),
  });
  if (response.status >= 300) throw new Error(`PUT ${id}: ${response.status} ${await response.text()}`);
};

const create = async (base: string, id: string) => {
  const response = await fetch(`${base}/api/middlewares`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, name: id, type: 'rateLimit', config: { average: 1, burst: 50 } }),
  });
  if (response.status !== 201) throw new Error(`POST ${id}: ${response.status} ${await response.text()}`);
};

async function latencies(base: string): Promise<number[]> {
  for (const id of [
    'single',
    ...Array.from({ length: 5 }, (_, i) => `warm-${i}`),
    ...Array.from({ length: 50 }, (_, i) => `m-${i}`),
  ])
    await create(base, id);
  for (let i = 0; i < 20; i++) await put(base, `warm-${i % 5}`, i + 1); // validators compiled, sockets warm
  const out: number[] = [];
  for (let i = 0; i < writes; i++) {
    const started = performance.now();
    await put(base, `m-${i % 50}`, i + 1);
    out.push(performance.now() - started);
  }
  return out;
}

const status = async (base: string) =>
  (await (await fetch(`${base}/api/history/status`)).json()) as {
    head: string | null;
    commits: number;
    pending: number;
    last_commit_ms: number;
    last_batch_files: number;
  };

const off = await withApp(false, latencies);
const results = await withApp(true, async (base, app) => {
  const on = await latencies(base);
  await app.history.idle();
  // one write → its commit
  const commitMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = (await status(base)).head;
    const started = performance.now();
    await put(base, 'single', 1000 + i);
    while ((await status(base)).head === before) await new Promise((resolve) => setTimeout(resolve, 5));
    commitMs.push(performance.now() - started);
  }
  // a batch of concurrent writes → committed
  const beforeBatch = await status(base);
  const started = performance.now();
  await Promise.all(Array.from({ length: batch }, (_, i) => create(base, `batch-${i}`)));
  const writtenMs = performance.now() - started;
  await app.history.idle();
  const batchMs = performance.now() - started;
  const afterBatch = await status(base);
  // git's share for 100 files in one batch: the same 100 middlewares changed at once, by hand (one commit)
  const gitMs: number[] = [];
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: batch }, (_, i) => put(base, `batch-${i}`, 100 * round + i + 2)));
    await app.history.idle();
    const s = await status(base);
    gitMs.push(s.last_commit_ms);
  }
  return { on, commitMs, writtenMs, batchMs, batchCommits: afterBatch.commits - beforeBatch.commits, gitMs };
});

const fmt = (n: number) => n.toFixed(2);
console.log(
  `write latency, ${writes} sequential PUTs (ms): history off p50 ${fmt(pct(off, 50))} p99 ${fmt(pct(off, 99))} | on p50 ${fmt(pct(results.on, 50))} p99 ${fmt(pct(results.on, 99))}`,
);
console.log(`write → commit (ms, batch_ms 1000): ${results.commitMs.map((v) => v.toFixed(0)).join(', ')}`);
console.log(
  `git's work per batch of ${batch} changed files (read, redact, fast-import), ms: ${results.gitMs.join(', ')}`,
);
console.log(
  `${batch} concurrent writes: answered in ${results.writtenMs.toFixed(0)} ms, committed ${results.batchMs.toFixed(0)} ms after the first, in ${results.batchCommits} commit(s)`,
);
