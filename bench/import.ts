/**
 * The middleware-manager import (API.md §4.24): how long a real import of `--middlewares` middlewares
 * and `--assignments` assignments takes, over a real socket (127.0.0.1) into an app whose resources
 * come from the fake Pangolin, with the config history on (the default). Prints figures; not a test.
 *
 *   npx tsx bench/import.ts [--middlewares 1000] [--assignments 50] [--rounds 3]
 *
 * Side by side, in the same process and on the same disk, with two references:
 * - `per object`: the same middlewares written one by one through `app.middlewares.create` (what the
 *   import did before the batch write: two fsyncs and a lock per file);
 * - `bare fsync floor`: the same number of YAML files written with writeAtomic (file fsync, rename)
 *   and the dir fsynced once — the disk's price of durable files, without any of our logic.
 * Rounds are interleaved (ours, per object, floor, ours, …) so a busy box slows all three alike.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../core/app.ts';
import { fsyncDir, writeAtomic } from '../core/store/atomic-write.ts';
import { builtinGroups } from '../plugins/index.ts';
import { testConfig } from '../test/helpers/build.ts';
import { startFakeUpstream, type FakeUpstream } from '../test/helpers/fake-upstream.ts';
import { mmDatabase } from '../test/import/mm-db.ts';
import { writeSources } from '../test/resources/support.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const middlewareCount = arg('middlewares', 1000);
const assignmentCount = Math.min(arg('assignments', 50), middlewareCount);
const rounds = arg('rounds', 3);

/** Resources of the fake Pangolin (fixtures/pangolin/traefik-config.json) that take assignments. */
const ROUTERS = [
  '1-Nextcloud-router',
  '2-Grafana-router',
  '3-5e2f283f21admin29-regex-Wiki-router',
  '6-Jellyfin-Media-router',
];
const HOSTS = ['cloud.example.com', 'grafana.example.com', 'wiki.example.com', 'media.example.com'];

const middlewareOf = (i: number) => ({
  id: `mw-${i}`,
  name: `Imported ${i}`,
  type: i % 2 === 0 ? 'rateLimit' : 'headers',
  config:
    i % 2 === 0
      ? { average: 100 + i, burst: 50 }
      : { customRequestHeaders: { 'X-Imported': String(i) }, customResponseHeaders: { 'X-Frame-Options': 'DENY' } },
});

const database = await mmDatabase({
  middlewares: Array.from({ length: middlewareCount }, (_, i) => middlewareOf(i)),
  resources: ROUTERS.map((id, i) => ({ id, host: HOSTS[i] })),
  assignments: Array.from({ length: assignmentCount }, (_, i) => ({
    resource_id: ROUTERS[i % ROUTERS.length],
    middleware_id: `mw-${i}`,
    priority: 100 + i,
  })),
});

type App = Awaited<ReturnType<typeof buildApp>>;

async function withApp<R>(fake: FakeUpstream, fn: (app: App, base: string) => Promise<R>): Promise<R> {
  const root = await mkdtemp(path.join(tmpdir(), 'sm-bench-import-'));
  const dataDir = path.join(root, 'data');
  await writeSources(dataDir, fake);
  const app = await buildApp({
    config: testConfig(dataDir, {
      auth: { mode: 'off' },
      history: { enabled: true, batch_ms: 1000 },
      datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' },
    }),
    groups: builtinGroups,
    logger: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const report = await app.resources.started();
    if (!report.ok) throw new Error(`startup sync failed: ${report.error}`);
    // a server that has been up a while: the history's first commit of the data dir is done
    await app.history.idle();
    return await fn(app, `http://127.0.0.1:${(app.server.address() as { port: number }).port}`);
  } finally {
    await app.history.idle();
    await app.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** Seconds of one real import over HTTP; checks that everything was created. */
async function ours(fake: FakeUpstream): Promise<number> {
  return withApp(fake, async (app, base) => {
    const started = performance.now();
    const response = await fetch(`${base}/api/import/middleware-manager`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(database),
      signal: AbortSignal.timeout(600_000),
    });
    const seconds = (performance.now() - started) / 1000;
    const body = (await response.json()) as { created?: { middlewares: unknown[]; assignments: unknown[] } };
    if (response.status !== 200) throw new Error(`import answered ${response.status}: ${JSON.stringify(body)}`);
    const made = [body.created!.middlewares.length, body.created!.assignments.length];
    if (made[0] !== middlewareCount || made[1] !== assignmentCount || app.middlewares.list().length < middlewareCount)
      throw new Error(`import created ${made.join('/')}, expected ${middlewareCount}/${assignmentCount}`);
    return seconds;
  });
}

/** Seconds to create the same middlewares one by one through the group (the previous import writer). */
async function perObject(fake: FakeUpstream): Promise<number> {
  return withApp(fake, async (app) => {
    const started = performance.now();
    for (let i = 0; i < middlewareCount; i++) {
      const m = middlewareOf(i);
      await app.middlewares.create({ ...m, type: m.type as 'rateLimit' });
    }
    return (performance.now() - started) / 1000;
  });
}

/** Seconds to write as many durable YAML files with nothing but writeAtomic and one dir fsync. */
async function floor(): Promise<number> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sm-bench-floor-'));
  try {
    const started = performance.now();
    const ids = Array.from({ length: middlewareCount }, (_, i) => i);
    // the same concurrency as the store's batch write (16 files at a time)
    for (let i = 0; i < ids.length; i += 16)
      await Promise.all(
        ids.slice(i, i + 16).map((n) =>
          writeAtomic(
            path.join(dir, `mw-${n}.yaml`),
            `name: Imported ${n}\ntype: rateLimit\nconfig:\n  average: ${n}\n`,
            {
              syncDir: false,
            },
          ),
        ),
      );
    await fsyncDir(dir);
    return (performance.now() - started) / 1000;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fake = await startFakeUpstream();
const figures = { ours: [] as number[], perObject: [] as number[], floor: [] as number[] };
const skipPerObject = process.argv.includes('--no-per-object');
try {
  for (let round = 1; round <= rounds; round++) {
    figures.ours.push(await ours(fake));
    if (!skipPerObject) figures.perObject.push(await perObject(fake));
    figures.floor.push(await floor());
    process.stderr.write(
      `round ${round}: import ${figures.ours.at(-1)!.toFixed(2)} s | per object ${figures.perObject.at(-1)?.toFixed(2) ?? '-'} s | floor ${figures.floor.at(-1)!.toFixed(2)} s\n`,
    );
  }
} finally {
  await fake.close();
}
const s = (values: number[]) => (values.length ? `${median(values).toFixed(2)} s` : 'skipped');
process.stdout.write(
  [
    `Node ${process.version}, ${new Date().toISOString()}; ${middlewareCount} middlewares + ${assignmentCount} assignments; medians of ${rounds} interleaved rounds`,
    '',
    '| Measure | Stack Manager | Reference in the same run |',
    '|---|---|---|',
    `| import over HTTP (history on) | ${s(figures.ours)} | per-object creates (middlewares only): ${s(figures.perObject)} |`,
    `| | | bare writeAtomic ×${middlewareCount} + 1 dir fsync: ${s(figures.floor)} |`,
  ].join('\n') + '\n',
);
process.exit(0);
