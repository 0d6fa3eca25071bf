/**
 * The layers of docs/ARCHITECTURE.md, checked on the imports themselves (issue 13):
 *
 *   core/  ←  model/  ←  plugins/<group>/  ←  plugins/index.ts, plugins/main.ts (composition root)
 *
 * - core/ imports neither model/ nor plugins/; model/ imports only core/ and model/.
 * - A group imports another group only if it declares it (directly or through the groups it
 *   declares) in its fastify-plugin `dependencies`, so the import graph between groups is a DAG that
 *   follows the registration order; and only the other group's public surface: its `index.ts`
 *   (plugin, decorator types, re-exports), `types.ts` or `schemas.ts` (the wire shapes of its API).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PUBLIC_SURFACE = new Set(['index.ts', 'types.ts', 'schemas.ts']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');
const IMPORT = /^\s*(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/gm;

/** Every relative import as [importing file, imported file], both relative to the repository. */
function imports(tree: string): [string, string][] {
  return tsFiles(path.join(ROOT, tree)).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m): [string, string] => [
      rel(file),
      rel(path.resolve(path.dirname(file), m[1] ?? m[2])),
    ]),
  );
}

/** `plugins/<group>/…` → group; files directly under plugins/ (the composition root) → undefined. */
const groupOf = (file: string): string | undefined => {
  const parts = file.split('/');
  return parts[0] === 'plugins' && parts.length > 2 ? parts[1] : undefined;
};

/**
 * The groups each group's index.ts declares as fastify-plugin `dependencies`, by directory; names
 * of core's own plugins (`auth`, the capability the auth group's routes use) are left out.
 */
function declaredDependencies(): Map<string, string[]> {
  const declared = new Map<string, { name: string; deps: string[] }>();
  for (const group of readdirSync(path.join(ROOT, 'plugins'))) {
    if (!statSync(path.join(ROOT, 'plugins', group)).isDirectory()) continue;
    const call = /export default fp\(\w+,\s*\{([\s\S]*?)\}\s*\);/.exec(
      readFileSync(path.join(ROOT, 'plugins', group, 'index.ts'), 'utf8'),
    );
    const name = call && /name:\s*'([^']+)'/.exec(call[1]);
    const list = call && /dependencies:\s*\[([^\]]*)\]/.exec(call[1]);
    declared.set(group, {
      name: name ? name[1] : group,
      deps: list ? [...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]) : [],
    });
  }
  const dirByName = new Map([...declared].map(([dir, { name }]) => [name, dir]));
  return new Map([...declared].map(([dir, { deps }]) => [dir, deps.flatMap((dep) => dirByName.get(dep) ?? [])]));
}

function closure(deps: Map<string, string[]>, group: string, seen = new Set<string>()): Set<string> {
  for (const dep of deps.get(group) ?? []) {
    if (seen.has(dep)) continue;
    seen.add(dep);
    closure(deps, dep, seen);
  }
  return seen;
}

test('core/ imports neither model/ nor plugins/', (t) => {
  const wrong = imports('core').filter(([, to]) => to.startsWith('model/') || to.startsWith('plugins/'));
  t.deepEqual(wrong, []);
});

test('model/ imports only core/ and model/', (t) => {
  const wrong = imports('model').filter(([, to]) => !to.startsWith('core/') && !to.startsWith('model/'));
  t.deepEqual(wrong, []);
});

test('a group imports only groups it declares as dependencies, and only their public surface', (t) => {
  const deps = declaredDependencies();
  const problems: string[] = [];
  for (const [from, to] of imports('plugins')) {
    const a = groupOf(from);
    const b = groupOf(to);
    if (!a || !b || a === b) continue;
    if (!closure(deps, a).has(b))
      problems.push(`${from} imports ${to}, but group ${a} does not declare a dependency on ${b}`);
    const file = to.split('/').slice(2).join('/');
    if (!PUBLIC_SURFACE.has(file))
      problems.push(`${from} imports ${to}, an internal of group ${b} (public: ${[...PUBLIC_SURFACE].join(', ')})`);
  }
  t.deepEqual(problems, []);
});

test('there is no import cycle between groups', (t) => {
  const edges = new Map<string, Set<string>>();
  for (const [from, to] of imports('plugins')) {
    const a = groupOf(from);
    const b = groupOf(to);
    if (a && b && a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
  }
  const cycles: string[] = [];
  const visiting: string[] = [];
  const done = new Set<string>();
  const visit = (group: string) => {
    if (done.has(group)) return;
    const at = visiting.indexOf(group);
    if (at >= 0) {
      cycles.push([...visiting.slice(at), group].join(' -> '));
      return;
    }
    visiting.push(group);
    for (const next of edges.get(group) ?? []) visit(next);
    visiting.pop();
    done.add(group);
  };
  for (const group of edges.keys()) visit(group);
  t.deepEqual(cycles, []);
  t.true(edges.size > 0, 'the parser found cross-group imports at all');
});

test('the declared dependencies between groups have no cycle', (t) => {
  const deps = declaredDependencies();
  const cyclic = [...deps.keys()].filter((group) => closure(deps, group).has(group));
  t.deepEqual(cyclic, []);
});
