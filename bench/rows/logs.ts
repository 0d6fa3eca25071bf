/**
 * Rows "access-log stats, N CLF / JSON lines": GET /api/logs/proxy/advanced on a generated log (the
 * shared generator, deterministic), cold (a new `top` each round, so no cached result), against
 * GoAccess on the CLF twin, both pinned to the server core; totals checked against the generator's
 * --stats; the server's RSS growth sampled during the request.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../core/config/load.ts';
import { hasCommand, median, peakRss, timedCommand, waitFor } from '../lib/measure.ts';
import { buildServer, startServer } from '../lib/server.ts';
import type { Row } from './types.ts';

const run = promisify(execFile);
const GENERATOR = path.join(PROJECT_ROOT, '..', 'shared', 'fixtures', 'access-logs', 'gen-access-log.mjs');

interface Expected {
  totalRequests: number;
  statusClasses: Record<string, number>;
  bytesSent: number;
}

/** The log file and the generator's reference stats, generated once into `dir` (≈45 s and ≈1 GB per million JSON lines). */
async function fixture(
  dir: string,
  format: 'clf' | 'json',
  lines: number,
): Promise<{ file: string; expected: Expected }> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${lines}.${format}.log`);
  const statsFile = path.join(dir, `${lines}.${format}.stats.json`);
  if (!existsSync(file)) {
    process.stderr.write(`  generating ${file}…\n`);
    await run(
      process.execPath,
      [
        GENERATOR,
        '--format',
        format,
        '--lines',
        String(lines),
        '--seed',
        '1',
        '--start',
        '2026-11-01T00:00:00Z',
        '--out',
        file,
      ],
      { maxBuffer: 1 << 20 },
    );
  }
  if (!existsSync(statsFile)) {
    const { stdout } = await run(process.execPath, [GENERATOR, '--stats', file], { maxBuffer: 16 << 20 });
    writeFileSync(statsFile, stdout);
  }
  const stats = JSON.parse(readFileSync(statsFile, 'utf8'));
  const key = Object.keys(stats).find((k) => k !== 'definitions')!;
  return { file, expected: stats[key] };
}

interface StatsBody {
  requests: number;
  status_classes: Record<string, number>;
  bytes_sent: number;
  lines_read: number;
}

export async function logsRow(options: { lines: number; dir: string; rounds: number }): Promise<Row[]> {
  // the compiled server, as `npm start` runs it: under tsx every worker thread loads tsx too
  await buildServer();
  const rows: Row[] = [];
  const goaccess = await hasCommand('goaccess');
  const gaTimes: number[] = [];
  let gaPeak = 0;
  for (const format of ['clf', 'json'] as const) {
    const { file, expected } = await fixture(options.dir, format, options.lines);
    const work = path.join(options.dir, `server-${format}`);
    mkdirSync(path.join(work, 'data'), { recursive: true });
    const server = await startServer({
      entry: 'dist',
      dataDir: path.join(work, 'data'),
      pangolinUrl: 'http://127.0.0.1:9/api/v1',
      accessLog: file,
    });
    try {
      // /api/health answers while the app is still starting (the early handler): wait for a route of the app itself
      await waitFor(
        async () => ((await fetch(`${server.base}/api/middlewares`)).status === 200 ? true : undefined),
        300_000,
        'the app',
      );
      const times: number[] = [];
      let growth = 0;
      let body: StatsBody | null = null;
      for (let round = 0; round < options.rounds; round++) {
        if (goaccess && format === 'clf') {
          const clf = await timedCommand('goaccess', [
            file,
            '--log-format=COMBINED',
            '--no-global-config',
            '--no-progress',
            '-o',
            path.join(work, 'goaccess.json'),
          ]);
          gaTimes.push(clf.seconds);
          gaPeak = Math.max(gaPeak, clf.peakMiB);
        }
        const t0 = performance.now();
        const sample = await peakRss(server.pid, async () => {
          const res = await fetch(`${server.base}/api/logs/proxy/advanced?top=${5 + round}`);
          if (res.status !== 200) throw new Error(`stats answered ${res.status}: ${await res.text()}`);
          return res.json() as Promise<StatsBody>;
        });
        times.push((performance.now() - t0) / 1000);
        growth = Math.max(growth, sample.peakMiB - sample.baseMiB);
        body = sample.value;
      }
      const t1 = performance.now();
      await (await fetch(`${server.base}/api/logs/proxy/advanced?top=5`)).arrayBuffer();
      const repeatMs = performance.now() - t1;
      const same =
        body!.requests === expected.totalRequests &&
        JSON.stringify(body!.status_classes) === JSON.stringify(expected.statusClasses) &&
        body!.bytes_sent === expected.bytesSent;
      const ours = median(times);
      const ga = gaTimes.length ? median(gaTimes) : NaN;
      const goal = format === 'clf' ? 5 : 2.5;
      rows.push({
        measure: `access-log stats, ${options.lines.toLocaleString('en')} ${format.toUpperCase()} lines`,
        ours: `${ours.toFixed(2)} s (${Math.round(options.lines / ours).toLocaleString('en')} lines/s), RSS growth ${growth.toFixed(0)} MiB, repeat ${repeatMs.toFixed(0)} ms; totals ${same ? 'match' : 'DIFFER from'} the generator's --stats`,
        reference: goaccess
          ? `GoAccess (CLF twin): ${ga.toFixed(2)} s (${Math.round(options.lines / ga).toLocaleString('en')} lines/s), ${gaPeak.toFixed(0)} MiB`
          : 'GoAccess not installed',
        goal: `≥ ${goal}× GoAccess, RSS growth ≤ 64 MiB`,
        verdict: `${(ga / ours).toFixed(1)}× ${ga / ours >= goal && growth <= 64 && same ? '✅' : '❌'}`,
      });
    } finally {
      await server.stop();
    }
  }
  return rows;
}
