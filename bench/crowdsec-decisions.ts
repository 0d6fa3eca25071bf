/**
 * CrowdSec decisions against a private real LAPI (API.md §4.23, issue 29): the time of a ban round
 * trip (POST /api/ip/decisions: alert in, alert read back), of a delete, of an allowlist entry that
 * removes a decision at once, and how long a decision the LAPI makes later lives before the sweep
 * removes it. Prints figures; not a test.
 *
 *   npx tsx bench/crowdsec-decisions.ts [--rounds 50] [--sweep-s 1]
 *
 * One app over inject() (no socket: the figures are ours plus the LAPI's), the fixture's LAPI.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../core/app.ts';
import { builtinGroups } from '../plugins/index.ts';
import { testConfig } from '../test/helpers/build.ts';
import { crowdsecConfig, cscli, hasCommands, startLapi } from '../test/helpers/crowdsec-lapi.ts';

const arg = (name: string, fallback: number) =>
  Number(process.argv[process.argv.indexOf(name) + 1] || fallback) || fallback;
const rounds = arg('--rounds', 50);
const sweepS = arg('--sweep-s', 1);
if (!hasCommands('crowdsec', 'cscli')) {
  console.log('crowdsec/cscli not installed (apt-get install crowdsec): nothing to measure');
  process.exit(0);
}

const lapi = await startLapi();
const root = await mkdtemp(path.join(tmpdir(), 'sm-bench-crowdsec-'));
const app = await buildApp({
  config: testConfig(path.join(root, 'data'), crowdsecConfig(lapi, { allowlist_sweep_s: sweepS })),
  groups: builtinGroups,
  logger: false,
});
await app.ready();

const stats = (label: string, ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
  console.log(`${label.padEnd(34)} n=${sorted.length}  median ${at(0.5)} ms  p90 ${at(0.9)} ms  max ${at(1)} ms`);
};
const timed = async <T>(call: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const value = await call();
  return [value, performance.now() - started];
};

try {
  const bans: number[] = [];
  const deletes: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const value = `198.51.100.${i % 250}`;
    const [ban, banMs] = await timed(() =>
      app.inject({ method: 'POST', url: '/api/ip/decisions', payload: { value, duration: '1h' } }),
    );
    if (ban.statusCode !== 201) throw new Error(`ban: ${ban.statusCode} ${ban.body}`);
    bans.push(banMs);
    const id = ban.json().decisions[0].id;
    const [, deleteMs] = await timed(() => app.inject({ method: 'DELETE', url: `/api/ip/decisions/${id}` }));
    deletes.push(deleteMs);
  }
  stats('ban round trip (POST, 201)', bans);
  stats('delete (DELETE, 204)', deletes);

  const allowlisted: number[] = [];
  const sweeps: number[] = [];
  for (let i = 0; i < Math.min(rounds, 10); i++) {
    const value = `203.0.113.${i}`;
    await cscli(lapi, 'decisions', 'add', '--ip', value, '--duration', '1h');
    const [entry, entryMs] = await timed(() =>
      app.inject({ method: 'POST', url: '/api/ip/allowlist', payload: { value } }),
    );
    if (entry.json().removed_decisions !== 1) throw new Error(`allowlist: ${entry.body}`);
    allowlisted.push(entryMs);
    // a decision the LAPI makes after the entry: how long it lives
    await cscli(lapi, 'decisions', 'add', '--ip', value, '--duration', '1h');
    const made = performance.now();
    for (;;) {
      const left = (await app.inject({ url: `/api/ip/blocked/${value}` })).json();
      if (!left.blocked) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    sweeps.push(performance.now() - made);
    await app.inject({ method: 'DELETE', url: `/api/ip/allowlist/${entry.json().id}` });
  }
  stats('allowlist entry removing 1 decision', allowlisted);
  stats(`later decision removed (sweep ${sweepS} s)`, sweeps);
} finally {
  await app.close();
  await lapi.stop();
  await rm(root, { recursive: true, force: true });
}
