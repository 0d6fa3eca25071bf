/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time per function and per file or package,
 * and the inclusive time of the functions named on the command line.
 *   npx tsx bench/lib/summarise-profile.ts FILE [--top 30] [--from-ms A --to-ms B]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

const file = process.argv[2];
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const top = arg('top', 30);
const fromMs = arg('from-ms', 0);
const toMs = arg('to-ms', Infinity);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const where = (url: string) => {
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/work\/[^/]+\/(.*)$/.exec(url);
  return own ? own[1] : url || '(native)';
};
const selfFn = new Map<string, number>();
const selfFile = new Map<string, number>();
const inclFile = new Map<string, number>();
let t = 0;
let total = 0;
profile.samples.forEach((id, i) => {
  t += profile.timeDeltas[i] / 1000;
  if (t < fromMs || t > toMs) return;
  const dt = profile.timeDeltas[i] / 1000;
  total += dt;
  const n = byId.get(id)!;
  const key = `${n.callFrame.functionName || '(anon)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  selfFn.set(key, (selfFn.get(key) ?? 0) + dt);
  const f = where(n.callFrame.url);
  selfFile.set(f, (selfFile.get(f) ?? 0) + dt);
  const seen = new Set<string>();
  for (let p: number | undefined = id; p !== undefined; p = parent.get(p)) {
    const w = where(byId.get(p)!.callFrame.url);
    if (!seen.has(w)) {
      seen.add(w);
      inclFile.set(w, (inclFile.get(w) ?? 0) + dt);
    }
  }
});
const print = (title: string, m: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(`${v.toFixed(0).padStart(8)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}\n`);
};
process.stdout.write(`total ${total.toFixed(0)} ms of samples\n`);
print('self time by function', selfFn);
print('self time by file/package', selfFile);
print('inclusive time by file/package', inclFile);
