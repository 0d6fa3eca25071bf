/**
 * Row "backup create, 2N files": POST /api/backup/create on a data dir of N resources and N
 * middlewares against GNU `tar czf` of the same dir, both pinned to the server core; the server's
 * RSS growth during the request and the slowest `GET /api/health` polled every 50 ms meanwhile
 * (the event loop must keep answering); a last round edits files during the backup (must never
 * be a 5xx).
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createStack, middlewareYaml } from '../stack.ts';
import { median, peakRss, rssMiB, timedCommand, waitFor } from '../lib/measure.ts';
import { buildServer, startServer } from '../lib/server.ts';
import type { Row } from './types.ts';

/** Polls `GET /api/health` every 50 ms until stopped; `stop` resolves to the slowest answer in ms. */
function pollHealth(base: string): { stop: () => Promise<number> } {
  let polling = true;
  let slowest = 0;
  const loop = (async () => {
    while (polling) {
      const t0 = performance.now();
      await fetch(`${base}/api/health`)
        .then((res) => res.arrayBuffer())
        .catch(() => undefined);
      slowest = Math.max(slowest, performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    stop: async () => {
      polling = false;
      await loop;
      return slowest;
    },
  };
}

/**
 * Waits until the server's RSS has stayed within 2 MiB for 3 s (at most 3 minutes): after the
 * first provider config, the startup sync of 10k resources still allocates for a while, and its
 * growth is not the backup's.
 */
async function settled(pid: number): Promise<void> {
  const samples: number[] = [];
  const deadline = performance.now() + 180_000;
  while (performance.now() < deadline) {
    samples.push(rssMiB(pid));
    if (samples.length > 3 && Math.abs(samples[samples.length - 1] - samples[samples.length - 4]) < 2) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

export async function backupRow(options: { resources: number; rounds: number }): Promise<Row[]> {
  // the compiled server, as `npm start` runs it: under tsx every worker thread loads tsx too
  await buildServer();
  const stack = await createStack(options.resources);
  const work = path.dirname(stack.dataDir);
  const server = await startServer({
    entry: 'dist',
    dataDir: stack.dataDir,
    pangolinUrl: stack.pangolinUrl,
    backupDir: path.join(work, 'backups'),
  });
  try {
    await waitFor(
      async () => ((await fetch(`${server.base}/api/v1/proxy-config`)).status === 200 ? true : undefined),
      600_000,
      'the first provider config',
    );
    // the early server answers the provider route from its snapshot before the app is built
    await waitFor(
      async () => ((await fetch(`${server.base}/api/backup/list`)).status === 200 ? true : undefined),
      600_000,
      'the backup routes',
    );
    const create = async () => {
      const health = pollHealth(server.base);
      const t0 = performance.now();
      const sample = await peakRss(server.pid, async () => {
        try {
          const res = await fetch(`${server.base}/api/backup/create`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          });
          return { status: res.status as number | string, body: await res.text() };
        } catch (err) {
          return { status: `no answer (${(err as Error).message})`, body: '' };
        }
      });
      const seconds = (performance.now() - t0) / 1000;
      return { seconds, growth: sample.peakMiB - sample.baseMiB, healthMs: await health.stop(), ...sample.value };
    };
    await settled(server.pid);
    // the same poll with no backup running: what the machine's load alone costs
    const idle = pollHealth(server.base);
    const idleRss = await peakRss(server.pid, () => new Promise((resolve) => setTimeout(resolve, 3000)));
    const idleGrowth = idleRss.peakMiB - idleRss.baseMiB;
    const idleHealthMs = await idle.stop();
    const ours: number[] = [];
    const tar: number[] = [];
    const growths: number[] = [];
    const healthMs: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      tar.push(
        // exit 1: "file changed as we read it" (the running server touches its lock and caches), archive complete
        (
          await timedCommand(
            'tar',
            ['czf', path.join(work, `tar-${round}.tar.gz`), '-C', stack.dataDir, '.'],
            undefined,
            [0, 1],
          )
        ).seconds,
      );
      const result = await create();
      if (result.status !== 201) throw new Error(`backup answered ${result.status}: ${result.body}`);
      ours.push(result.seconds);
      growths.push(result.growth);
      healthMs.push(result.healthMs);
    }
    // concurrent edits: rewrite middleware files while a backup runs
    let editing = true;
    const edits = (async () => {
      // about 50 edits per second: a busy operator or a GitOps sync, not a flood that keeps the store reloading
      for (let e = 0; editing; e++) {
        await writeFile(
          path.join(stack.dataDir, 'middlewares', `rl-${1 + (e % options.resources)}.yaml`),
          middlewareYaml(1 + (e % options.resources), 200 + e),
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    let concurrent;
    try {
      concurrent = await create();
    } finally {
      editing = false;
      await edits;
    }
    const t = median(ours);
    const ref = median(tar);
    // the server's own background work (discovery polls of 10k routers) may fall into a round:
    // the verdict takes the median round, and the idle window's growth is printed beside it
    const growth = median(growths);
    const ok = t <= 5 * ref && growth <= 64 && concurrent.status === 201;
    return [
      {
        measure: `backup create, ${(2 * options.resources).toLocaleString('en')} files (${options.resources.toLocaleString('en')} resources)`,
        ours:
          `${t.toFixed(2)} s, RSS growth per round ${growths.map((g) => g.toFixed(0)).join('/')} MiB ` +
          `(idle 3 s: ${idleGrowth.toFixed(0)} MiB), slowest health per round ` +
          `${healthMs.map((ms) => ms.toFixed(0)).join('/')} ms (idle ${idleHealthMs.toFixed(0)} ms); ` +
          `with concurrent edits: ${concurrent.status} in ${concurrent.seconds.toFixed(2)} s ` +
          `(health ${concurrent.healthMs.toFixed(0)} ms); load average ${loadavg()[0].toFixed(1)}`,
        reference: `GNU \`tar czf\` of the same dir: ${ref.toFixed(2)} s`,
        goal: '≤ 5× `tar czf`, RSS growth ≤ 64 MiB (median round), never a 5xx',
        verdict: `${(t / ref).toFixed(1)}× ${ok ? '✅' : '❌'}`,
      },
    ];
  } finally {
    await server.stop();
    if (process.env.KEEP_BENCH_DIRS) process.stderr.write(`  kept ${work}\n`);
    else await stack.close();
  }
}
