/**
 * Row "backup create, 2N files": POST /api/backup/create on a data dir of N resources and N
 * middlewares against GNU `tar czf` of the same dir, both pinned to the server core; the server's
 * RSS growth during the request; a last round edits files during the backup (must never be a 5xx).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createStack, middlewareYaml } from '../stack.ts';
import { median, peakRss, timedCommand, waitFor } from '../lib/measure.ts';
import { startServer } from '../lib/server.ts';
import type { Row } from './types.ts';

export async function backupRow(options: { resources: number; rounds: number }): Promise<Row[]> {
  const stack = await createStack(options.resources);
  const work = path.dirname(stack.dataDir);
  const server = await startServer({
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
    const create = async () => {
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
      return { seconds: (performance.now() - t0) / 1000, growth: sample.peakMiB - sample.baseMiB, ...sample.value };
    };
    const ours: number[] = [];
    const tar: number[] = [];
    let growth = 0;
    for (let round = 0; round < options.rounds; round++) {
      tar.push(
        (await timedCommand('tar', ['czf', path.join(work, `tar-${round}.tar.gz`), '-C', stack.dataDir, '.'])).seconds,
      );
      const result = await create();
      if (result.status !== 201) throw new Error(`backup answered ${result.status}: ${result.body}`);
      ours.push(result.seconds);
      growth = Math.max(growth, result.growth);
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
    const ok = t <= 5 * ref && growth <= 64 && concurrent.status === 201;
    return [
      {
        measure: `backup create, ${(2 * options.resources).toLocaleString('en')} files (${options.resources.toLocaleString('en')} resources)`,
        ours: `${t.toFixed(2)} s, RSS growth ${growth.toFixed(0)} MiB; with concurrent edits: ${concurrent.status}`,
        reference: `GNU \`tar czf\` of the same dir: ${ref.toFixed(2)} s`,
        goal: '≤ 5× `tar czf`, RSS growth ≤ 64 MiB, never a 5xx',
        verdict: `${(t / ref).toFixed(1)}× ${ok ? '✅' : '❌'}`,
      },
    ];
  } finally {
    await server.stop();
    if (process.env.KEEP_BENCH_DIRS) process.stderr.write(`  kept ${work}\n`);
    else await stack.close();
  }
}
