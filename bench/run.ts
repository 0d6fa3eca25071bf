/**
 * The performance table of issue 11 in one command: every row measured against its reference in
 * the same run, the server pinned to core 0 and the load generator / reference tools on core 1
 * (see bench/lib/measure.ts), printed as a Markdown table ready for README's "Performance".
 *
 *   npm run bench -- [--resources 1000] [--rows provider,startup,logs,backup,traefik-edit,live-check] [--rounds 5] [--duration 3]
 *                    [--startup-resources 1000,10000] [--startup-entry dist|tsx] [--backup-resources 10000]
 *                    [--log-lines 1000000] [--log-dir /tmp/sm-bench-logs]  (logs are generated there once, ≈1 GB per million JSON lines)
 *                    [--traefik-edits 50] [--traefik-resources 1]  (row traefik-edit: a real Traefik, skipped without its binary)
 *                    [--live-resources 1000,10000]  (row live-check: CPU of one §4.19 check cycle, in process)
 */
import { backupRow } from './rows/backup.ts';
import { liveCheckRow } from './rows/live-check.ts';
import { logsRow } from './rows/logs.ts';
import { providerRow, RUNS_PER_ROUND } from './rows/provider.ts';
import { startupRow } from './rows/startup.ts';
import { traefikEditRow } from './rows/traefik-edit.ts';
import type { Row } from './rows/types.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}
const resources = Number(arg('resources', '1000'));
const rows = arg('rows', 'provider,startup,logs,backup,traefik-edit,live-check').split(',');
const rounds = Number(arg('rounds', '5'));
const duration = Number(arg('duration', '3'));
const logLines = Number(arg('log-lines', '1000000'));
const logDir = arg('log-dir', '/tmp/sm-bench-logs');
const backupResources = Number(arg('backup-resources', '10000'));

const table: Row[] = [];
const print = (row: Row) => process.stderr.write(`  ${row.measure}: ${row.ours} | ${row.reference} | ${row.verdict}\n`);
for (const name of rows) {
  process.stderr.write(`${name}…\n`);
  let out: Row[];
  if (name === 'provider') out = await providerRow({ resources, rounds, duration });
  else if (name === 'startup')
    out = await startupRow({
      resources: arg('startup-resources', String(resources)).split(',').map(Number),
      entry: arg('startup-entry', 'dist') === 'tsx' ? 'tsx' : 'dist',
    });
  else if (name === 'logs') out = await logsRow({ lines: logLines, dir: logDir, rounds: Math.min(rounds, 3) });
  else if (name === 'backup') out = await backupRow({ resources: backupResources, rounds: Math.min(rounds, 3) });
  else if (name === 'traefik-edit')
    out = await traefikEditRow({
      edits: Number(arg('traefik-edits', '50')),
      resources: Number(arg('traefik-resources', '1')),
    });
  else if (name === 'live-check')
    out = liveCheckRow({ resources: arg('live-resources', '1000,10000').split(',').map(Number) });
  else throw new Error(`unknown row ${name}: provider, startup, logs, backup, traefik-edit, live-check`);
  out.forEach(print);
  table.push(...out);
}

const lines = [
  `Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; server on core 0, load generator and reference tools on core 1; medians of ${rounds} interleaved rounds (HTTP: ${duration} s runs, the median of ${RUNS_PER_ROUND} per process)`,
  '',
  '| Measure | Stack Manager | Reference in the same run | Goal | Result |',
  '|---|---|---|---|---|',
  ...table.map((r) => `| ${r.measure} | ${r.ours} | ${r.reference} | ${r.goal} | ${r.verdict} |`),
];
process.stdout.write(lines.join('\n') + '\n');
process.exit(0);
