/**
 * Readiness and liveness of the compiled server (API.md §4.1, issue 24 item 1): `/api/health` answers
 * 200 only once every route is served, so a script, compose's `service_healthy` or a readiness probe
 * that waits for it never meets a 503 afterwards; `/api/health/live` answers as soon as the process
 * listens. Polled from outside from the moment the process is spawned, as an orchestrator does.
 */
import anyTest, { type TestFn } from 'ava';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  useProductionApp,
  holdPlugin,
  imageHealthcheck,
  serverEnv,
  startServer,
  type ServerProcess,
} from '../helpers/production-app.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ app: string; remove: () => Promise<void>; fake: FakeUpstream }>;

useProductionApp(test);
test.before(async (t) => {
  t.context.fake = await startFakeUpstream();
});
test.after.always(async (t) => {
  await t.context.fake?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** One request; status 0 while nothing listens yet. */
async function call(base: string, url: string, init: RequestInit = {}): Promise<Answer> {
  try {
    const response = await fetch(`${base}${url}`, init);
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // HTML (the UI) or empty
    }
    return { status: response.status, headers: response.headers, body };
  } catch {
    return { status: 0, headers: new Headers(), body: {} };
  }
}

/** Polls /api/health until 200; every answer before it is kept. */
async function pollHealthUntilReady(base: string, server: ServerProcess): Promise<Answer[]> {
  const seen: Answer[] = [];
  await waitFor(
    async () => {
      if (server.child.exitCode !== null) throw new Error(`server exited: ${server.stderr()}`);
      const answer = await call(base, '/api/health');
      seen.push(answer);
      return answer.status === 200;
    },
    10_000,
    5,
  );
  return seen;
}

/** One request of every route class right after the first 200 of /api/health. */
async function everyRouteClass(base: string, dataDir: string): Promise<Record<string, number>> {
  // written while the app is built: an early 200 finds no token yet (status 0 below)
  const token = await readFile(path.join(dataDir, 'auth', 'initial-admin-token'), 'utf8').catch(() => null);
  const auth = { authorization: `Bearer ${token?.trim()}` };
  const answers = await Promise.all([
    call(base, '/api/openapi.json'),
    call(base, '/api/jobs'),
    token === null ? { status: 0 } : call(base, '/api/jobs', { headers: auth }),
    call(base, '/api/middlewares', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `rate ${Math.random()}`, type: 'rateLimit', config: { average: 10, burst: 5 } }),
    }),
    call(base, '/api/proxy-config'),
    call(base, '/api/v1/traefik-config'),
    call(base, '/'),
    call(base, '/api/health/live'),
  ]);
  const names = ['openapi', 'operations', 'operations+token', 'write', 'provider', 'provider-legacy', 'ui', 'live'];
  return Object.fromEntries(names.map((name, i) => [name, answers[i].status]));
}

const EXPECTED = {
  openapi: 200,
  operations: 401,
  'operations+token': 200,
  write: 201,
  provider: 200,
  'provider-legacy': 200,
  ui: 200,
  live: 200,
};

test.serial(
  'health says 503 starting until every route is served; after its first 200 no route class answers 503',
  async (t) => {
    const { app, fake } = t.context;
    const work = await mkdtemp(path.join(tmpdir(), 'sm-ready-'));
    await chmod(work, 0o755);
    t.teardown(() => rm(work, { recursive: true, force: true }));
    const uiDir = path.join(work, 'ui');
    await mkdir(uiDir);
    await writeFile(path.join(uiDir, 'index.html'), '<!doctype html><title>ui</title>');
    const dataDir = path.join(work, 'data');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = serverEnv(work, {
      PORT: String(port),
      PANGOLIN_URL: fake.pangolinUrl,
      TRAEFIK_API_URL: fake.url,
      UI_DIR: uiDir,
    });

    // a first start, without a snapshot: polled from the spawn
    const first = startServer(app, env);
    t.teardown(() => {
      first.child.kill('SIGKILL');
    });
    const before = await pollHealthUntilReady(base, first);
    const after = await everyRouteClass(base, dataDir);
    // without a snapshot the provider paths answer 502 until the first upstream fetch (API.md §4.9):
    // readiness does not wait for Pangolin, which may be down for long
    for (const provider of ['provider', 'provider-legacy'] as const) {
      t.true([200, 502].includes(after[provider]), `${provider}: ${after[provider]}`);
      after[provider] = 200;
    }
    t.deepEqual(after, EXPECTED, 'no 503 once /api/health said 200');
    for (const answer of before.slice(0, -1).filter((a) => a.status !== 0))
      t.is(answer.status, 503, JSON.stringify(answer.body));
    t.log(
      `first start: ${before.length} health polls before 200, ${before.filter((a) => a.status === 503).length} of them 503`,
    );
    await waitFor(() => existsSync(path.join(dataDir, '.cache', 'provider-config.snapshot')), 10_000);
    first.child.kill('SIGTERM');
    t.is((await first.exit).code, 0, first.stderr());

    // a restart whose build is held (a third-party plugin waits for a file): the starting state is
    // observable as long as the test needs, and the provider paths serve the snapshot meanwhile
    const { release } = await holdPlugin(work);
    const second = startServer(app, { ...env, PLUGINS_DIR: path.join(work, 'plugins'), PLUGINS_ENABLED: 'hold' });
    t.teardown(() => {
      second.child.kill('SIGKILL');
    });
    const starting = await waitFor(async () => {
      const answer = await call(base, '/api/health');
      return answer.status === 0 ? null : answer;
    }, 10_000);
    t.is(starting.status, 503);
    t.is(starting.headers.get('retry-after'), '1');
    t.like(starting.body, { id: 'starting', status: 'starting' });
    t.is(typeof starting.body.message, 'string');
    t.is(typeof starting.body.version, 'string');
    t.true(Number.isInteger(starting.body.uptime_s));
    const live = await call(base, '/api/health/live');
    t.is(live.status, 200);
    t.like(live.body, { status: 'starting', version: starting.body.version });
    t.true(Number.isInteger(live.body.uptime_s));
    const snapshot = await call(base, '/api/proxy-config');
    t.is(snapshot.status, 200, 'the restart snapshot is served while the app is built');
    t.is(snapshot.headers.get('x-config-stale'), 'true');
    t.is((await call(base, '/api/openapi.json')).status, 503);
    // the image's HEALTHCHECK (compose's service_healthy) fails while the app is built
    t.is(await imageHealthcheck(port), 1, 'the image HEALTHCHECK fails while starting');
    t.false(
      second.lines.some((l) => l.msg === 'Stack Manager ready'),
      'the build was still held',
    );

    await writeFile(release, '');
    const held = await pollHealthUntilReady(base, second);
    t.deepEqual(await everyRouteClass(base, dataDir), EXPECTED, 'no 503 once /api/health said 200');
    t.true(held.every((a) => a.status === 503 || a.status === 200));
    const ready = await call(base, '/api/health');
    t.like(ready.body, { status: 'ok', version: starting.body.version });
    t.like((await call(base, '/api/health/live')).body, { status: 'ok' });
    t.is(await imageHealthcheck(port), 0, 'the image HEALTHCHECK passes once ready');
    second.child.kill('SIGTERM');
    t.is((await second.exit).code, 0, second.stderr());
  },
);
