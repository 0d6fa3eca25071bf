/**
 * Time from a hand edit of a YAML file to its `object` event on an open GET /api/events stream
 * (issue 9: "a GitOps edit shows up in an open browser within a second"). Prints figures; not a test.
 *
 *   npx tsx bench/events-latency.ts [--edits 30]
 *
 * One app on a temp data dir, one SSE client over a real socket; each round rewrites one
 * middleware file (a change) and creates a new one (an add), waiting for each event.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../core/app.ts';
import { builtinGroups } from '../plugins/index.ts';
import { testConfig } from '../test/helpers/build.ts';
import { openSse } from '../test/events/sse-client.ts';

const edits = Number(process.argv[process.argv.indexOf('--edits') + 1] || 30) || 30;
const root = await mkdtemp(path.join(tmpdir(), 'sm-bench-events-'));
const app = await buildApp({
  config: testConfig(path.join(root, 'data'), { auth: { mode: 'off' } }),
  groups: builtinGroups,
  logger: false,
});
await app.listen({ port: 0, host: '127.0.0.1' });
const client = await openSse(
  `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/events?types=object`,
);
const dir = path.join(app.store.dataDir, 'middlewares');
await mkdir(dir, { recursive: true });

async function timed(write: () => Promise<void>, id: string): Promise<number> {
  const from = client.events.length;
  const started = performance.now();
  await write();
  await client.next((e) => JSON.parse(e.data).id === id, 10_000, from);
  return performance.now() - started;
}

const changes: number[] = [];
const adds: number[] = [];
// the first file after startup pays for lazily compiled validators
const first = await timed(
  () => writeFile(path.join(dir, 'edited.yaml'), 'name: Edited\ntype: rateLimit\nconfig:\n  average: 0\n'),
  'edited',
);
for (let i = 1; i <= edits; i++) {
  // past the store's 300 ms debounce window, so every edit is a leading-edge read
  await new Promise((resolve) => setTimeout(resolve, 400));
  changes.push(
    await timed(
      () => writeFile(path.join(dir, 'edited.yaml'), `name: Edited\ntype: rateLimit\nconfig:\n  average: ${i}\n`),
      'edited',
    ),
  );
  adds.push(
    await timed(
      () => writeFile(path.join(dir, `new-${i}.yaml`), 'name: New\ntype: rateLimit\nconfig:\n  average: 1\n'),
      `new-${i}`,
    ),
  );
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const line = (label: string, values: number[]) =>
  `${label}: p50 ${quantile(values, 0.5).toFixed(1)} ms, p95 ${quantile(values, 0.95).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms (n=${values.length})`;
console.log(`first hand edit after startup → SSE event: ${first.toFixed(1)} ms`);
console.log(line('hand edit of an existing file → SSE event', changes));
console.log(line('new file → SSE event', adds));
client.close();
await app.close();
await rm(root, { recursive: true, force: true });
