/**
 * Rows "start to first full provider config": the server process (npm start's entry point) from
 * spawn until GET /api/v1/proxy-config serves every resource's router with its middleware; first on
 * GitOps-written files (no data/.cache), then a warm restart on the same data dir. RSS at that point.
 * By default the compiled server, as `npm start` runs it (built first); `--startup-entry tsx` runs the
 * sources through tsx, whose transpiling adds about a second to every start.
 */
import { createStack } from '../stack.ts';
import { processTree, rssMiB, waitFor } from '../lib/measure.ts';
import { buildServer, startServer, type RunningServer } from '../lib/server.ts';
import type { Row } from './types.ts';

/** True once the provider config at `url` has all `n` routers carrying their resource's middleware (`rl-<i>`). */
export async function fullConfig(url: string, n: number): Promise<true | undefined> {
  const res = await fetch(url);
  if (res.status !== 200) return undefined;
  const config = (await res.json()) as { http?: { routers?: Record<string, { middlewares?: string[] }> } };
  let assigned = 0;
  for (const router of Object.values(config.http?.routers ?? {}))
    if (router.middlewares?.some((m) => m.startsWith('rl-'))) assigned++;
  return assigned >= n ? true : undefined;
}

async function timeToFull(server: RunningServer, n: number): Promise<{ seconds: number; rss: number; tree: number }> {
  await waitFor(() => fullConfig(`${server.base}/api/v1/proxy-config`, n), 600_000, `a full config of ${n} resources`);
  const seconds = (performance.now() - server.startedAt) / 1000;
  const rss = rssMiB(server.pid);
  return { seconds, rss, tree: processTree(server.pid).reduce((a, p) => a + rssMiB(p), 0) };
}

export async function startupRow(options: { resources: number[]; entry: 'tsx' | 'dist' }): Promise<Row[]> {
  const rows: Row[] = [];
  const { entry } = options;
  if (entry === 'dist') await buildServer();
  for (const n of options.resources) {
    const stack = await createStack(n);
    try {
      const first = await startServer({ dataDir: stack.dataDir, pangolinUrl: stack.pangolinUrl, entry });
      const cold = await timeToFull(first, n);
      await first.stop();
      const second = await startServer({ dataDir: stack.dataDir, pangolinUrl: stack.pangolinUrl, entry });
      const warm = await timeToFull(second, n);
      await second.stop();
      const coldGoal = n <= 1000 ? 3 : 15;
      const warmGoal = n <= 1000 ? 1.5 : 8;
      rows.push({
        measure: `start to first full provider config, first start on GitOps-written files, ${n.toLocaleString('en')} resources (${entry === 'dist' ? '`npm start`, compiled' : 'sources through tsx'})`,
        ours: `${cold.seconds.toFixed(1)} s, RSS ${cold.rss.toFixed(0)} MiB`,
        reference: '–',
        goal: `≤ ${coldGoal} s`,
        verdict: cold.seconds <= coldGoal ? '✅' : '❌',
      });
      rows.push({
        measure: `same, warm restart (\`npm start\` on the same data dir), ${n.toLocaleString('en')} resources`,
        ours: `${warm.seconds.toFixed(1)} s, RSS ${warm.rss.toFixed(0)} MiB (tree ${warm.tree.toFixed(0)} MiB)`,
        reference: '–',
        goal: n <= 1000 ? `≤ ${warmGoal} s` : `≤ ${warmGoal} s, RSS ≤ 250 MiB`,
        verdict: warm.seconds <= warmGoal && (n <= 1000 || warm.rss <= 250) ? '✅' : '❌',
      });
    } finally {
      await stack.close();
    }
  }
  return rows;
}
