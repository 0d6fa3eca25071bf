/**
 * Architecture figures of issue 13, printed the same way before and after a change:
 * files in core/ model/ plugins/, median and max lines per file, casts of request parts,
 * cross-group imports and import cycles between groups.
 *
 *   npx tsx bench/arch-figures.ts
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOTS = ['core', 'model', 'plugins'];
const root = path.resolve(import.meta.dirname, '..');

function tsFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

const files = ROOTS.flatMap((r) => tsFiles(path.join(root, r)));
const lineCounts = files.map((f) => readFileSync(f, 'utf8').split('\n').length - 1).sort((a, b) => a - b);
const median = lineCounts[Math.floor((lineCounts.length - 1) / 2)];

const CAST = /\b(?:request\.(?:body|params|query)|req\.\w+)\s+as\b/g;
let casts = 0;
for (const f of files) casts += [...readFileSync(f, 'utf8').matchAll(CAST)].length;

/** The group a file under plugins/ belongs to (plugins/<group>/...), or undefined for top-level files. */
function groupOf(file: string): string | undefined {
  const rel = path.relative(path.join(root, 'plugins'), file).split(path.sep);
  return rel.length > 1 && !rel[0].startsWith('..') ? rel[0] : undefined;
}

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/gm;
const edges = new Map<string, Set<string>>();
let crossImports = 0;
for (const f of files) {
  const from = groupOf(f);
  if (!from) continue;
  for (const m of readFileSync(f, 'utf8').matchAll(IMPORT)) {
    const to = groupOf(path.resolve(path.dirname(f), m[1]));
    if (!to || to === from) continue;
    crossImports++;
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from)!.add(to);
  }
}

/** Strongly connected components with more than one group (Tarjan). */
function cycles(): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

const sccs = cycles();
const pairs = [...edges].flatMap(([a, tos]) =>
  [...tos].filter((b) => a < b && edges.get(b)?.has(a)).map((b) => `${a}<->${b}`),
);
console.log(`ts files (core/ model/ plugins/): ${files.length}`);
console.log(`lines per file: median ${median}, max ${lineCounts.at(-1)}`);
console.log(`casts of request parts: ${casts}`);
console.log(
  `cross-group imports: ${crossImports} (group edges: ${[...edges.values()].reduce((n, s) => n + s.size, 0)})`,
);
console.log(`groups in import cycles: ${sccs.length === 0 ? 'none' : sccs.map((c) => c.join(',')).join(' | ')}`);
console.log(`two-way group pairs: ${pairs.length === 0 ? 'none' : pairs.join(' ')}`);
