/**
 * One log line per request (debug for provider polls whatever they answer, and for health checks),
 * the provider's changes of answer once each (API.md §2.11), and the access summary at start.
 */
import test, { type ExecutionContext } from 'ava';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { AppHost } from '../../core/app-host.ts';
import { buildApp } from '../../core/app.ts';
import { logAccessSummary, isLoopback } from '../../core/startup-summary.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { build, tempDir, testConfig } from '../helpers/build.ts';
import { bearer, initialAdminToken, logCapture } from '../auth/support.ts';
import { harness } from '../resources/support.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { waitFor } from '../helpers/wait.ts';

const requestLines = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => l.msg === 'request completed' || l.msg === 'incoming request');

test('provider polls and health checks log one debug line; other requests one info line', async (t) => {
  const logs = logCapture();
  // a fake Pangolin, so the provider endpoint has a configuration to serve
  const { app } = await harness(t, { logStream: logs.stream, config: { log: { level: 'debug' } } });
  await app.proxyConfig.regenerate();
  t.is((await app.inject({ url: '/api/v1/proxy-config' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/health' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/middlewares' })).statusCode, 200);
  t.is((await app.inject({ url: '/api/no-such-thing' })).statusCode, 404);
  const lines = requestLines(logs.lines());
  t.deepEqual(
    lines.map((l) => [l.level, (l.req as { url: string }).url, (l.res as { statusCode: number }).statusCode]),
    [
      [20, '/api/v1/proxy-config', 200],
      [20, '/api/health', 200],
      [30, '/api/middlewares', 200],
      [30, '/api/no-such-thing', 404],
    ],
  );
  t.true(lines.every((l) => typeof l.responseTime === 'number'));
});

test('at the default level info, a polling Traefik leaves no line per poll', async (t) => {
  const logs = logCapture();
  const { app } = await harness(t, { logStream: logs.stream, config: { log: { level: 'info' } } });
  await app.proxyConfig.regenerate();
  for (let i = 0; i < 5; i++) t.is((await app.inject({ url: '/api/v1/proxy-config' })).statusCode, 200);
  t.deepEqual(requestLines(logs.lines()), []);
});

test('a Traefik polling with a wrong or no provider token: one warning for the instance, no info line per refused poll', async (t) => {
  const logs = logCapture();
  const token = 'p'.repeat(32);
  const { app } = await harness(t, {
    logStream: logs.stream,
    config: { log: { level: 'info' }, auth: { mode: 'all' }, provider: { token } },
  });
  await app.proxyConfig.regenerate();
  // fewer than auth.max_failures (10), so every poll is answered 401 rather than 429
  const headers = { authorization: `Bearer ${'w'.repeat(32)}`, 'user-agent': 'Go-http-client/1.1' };
  for (let i = 0; i < 8; i++) t.is((await app.inject({ url: '/api/v1/proxy-config', headers })).statusCode, 401);
  // then with no token at all (the header left out): not counted as failures, refused all the same
  const bare = { 'user-agent': 'Go-http-client/1.1' };
  for (let i = 0; i < 4; i++) t.is((await app.inject({ url: '/api/v1/proxy-config', headers: bare })).statusCode, 401);
  const lines = logs.lines();
  t.deepEqual(requestLines(lines), [], 'no request line at info');
  t.deepEqual(
    lines.filter((l) => l.msg === 'authentication failed' || l.msg === 'authentication required'),
    [],
    'no authentication line at info',
  );
  const refused = lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('a provider poll was refused'));
  t.is(refused.length, 1, JSON.stringify(lines));
  t.like(refused[0], { level: 40, document: 'default', user_agent: 'Go-http-client/1.1' });
  const status = (
    await app.inject({ url: '/api/proxy-config/status', headers: bearer(await initialAdminToken(app)) })
  ).json() as { targets: Array<{ id: string; instances: Array<{ polls: Record<string, number> }> }> };
  const target = status.targets.find((x) => x.id === 'default');
  t.is(target?.instances.length, 1);
  t.is(target?.instances[0].polls['401'], 12);
});

/** The app as `npm start` serves it (AppHost: fast routes, then Fastify) on a loopback port, logging at info. */
async function servedApp(t: ExecutionContext, pangolinUrl: string) {
  const logs = logCapture();
  const config = testConfig(path.join(await tempDir(t), 'data'), {
    auth: { mode: 'off' },
    templates: { seed: false },
    log: { level: 'info' },
    datasources: { pangolin_url: pangolinUrl, traefik_url: 'http://127.0.0.1:9', active: 'pangolin' },
  });
  const silent = pino({ level: 'silent' });
  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({ config, groups: builtinGroups, generation, serverFactory, logStream: logs.stream }),
    silent,
  );
  const app = await host.start();
  t.teardown(() => host.close());
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  /** N polls as Traefik sends them: statuses and X-Config-Stale of each. */
  const poll = async (n: number) => {
    const answers: Array<[number, string | null]> = [];
    for (let i = 0; i < n; i++) {
      const response = await fetch(`${base}/api/v1/traefik-config`, {
        headers: { 'user-agent': 'Go-http-client/1.1' },
      });
      await response.arrayBuffer();
      answers.push([response.status, response.headers.get('x-config-stale')]);
    }
    return answers;
  };
  return { app, logs, poll, base };
}

/** Lines written for single requests (Fastify's, and the error handler's warning of a 5xx). */
const perRequest = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => 'req' in l || 'res' in l || l.id === 'upstream_unavailable' || 'reqId' in l);
const stateLines = (lines: Record<string, unknown>[]) => lines.filter((l) => 'provider_state' in l);

test('with Pangolin unreachable, 30 polls answered 502 write no line per request and one state line', async (t) => {
  const { logs, poll, base } = await servedApp(t, 'http://127.0.0.1:9/api/v1');
  const before = logs.lines().length;
  const answers = await poll(30);
  t.deepEqual(new Set(answers.map(([status]) => status)), new Set([502]));
  const written = logs.lines().slice(before);
  t.deepEqual(perRequest(written), [], 'no line per poll at info or above');
  const changes = stateLines(written);
  t.is(changes.length, 1, JSON.stringify(changes));
  t.like(changes[0], { level: 40, provider_state: 'unavailable', previous: 'ok', component: 'proxy-config' });
  t.regex(String(changes[0].upstream_error), /127\.0\.0\.1:9|ECONNREFUSED|fetch failed/i);
  t.log(`${written.length} lines in all for 30 polls: ${JSON.stringify(written.map((l) => l.msg))}`);
  // the polls are counted per instance in the status instead (503: no config can be produced)
  const status = await fetch(`${base}/api/proxy-config/status`);
  t.is(status.status, 503);
  const { targets } = (await status.json()) as {
    targets: Array<{ id: string; instances: Array<{ user_agent: string; current: boolean; polls: unknown }> }>;
  };
  t.deepEqual(
    targets.find((target) => target.id === 'default')?.instances.map((i) => [i.user_agent, i.current, i.polls]),
    [['Go-http-client/1.1', false, { '200': 0, '304': 0, '401': 0, '502': 30 }]],
  );
});

test('stale answers and the return to a current config are logged once each, polls never', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const { app, logs, poll } = await servedApp(t, fake.pangolinUrl);
  // until the first generation the polls are answered 502 (logged once, as above)
  await waitFor(async () => (await poll(1))[0][0] === 200, 10_000);
  const from = logs.lines().length;
  t.deepEqual(await poll(10), Array(10).fill([200, null]));
  fake.state.fault = '502';
  t.false((await app.resources.syncNow()).ok);
  t.deepEqual(await poll(20), Array(20).fill([200, 'true']), 'the last good config, stale');
  fake.state.fault = null;
  t.true((await app.resources.syncNow()).ok);
  t.deepEqual(await poll(20), Array(20).fill([200, null]));
  const lines = logs.lines().slice(from);
  t.deepEqual(perRequest(lines), [], 'no line per poll at info or above');
  t.deepEqual(
    stateLines(lines).map((l) => [l.level, l.provider_state, l.previous]),
    [
      [40, 'stale', 'ok'],
      [30, 'ok', 'stale'],
    ],
  );
  t.regex(String(stateLines(lines)[0].upstream_error), /502/);
});

async function summary(t: Parameters<typeof build>[0], config: Record<string, unknown>) {
  const logs = logCapture();
  const app = await build(t, { config });
  logAccessSummary(app, pino({ level: 'info' }, logs.stream));
  return logs.lines();
}

test('ops mode on 0.0.0.0: the summary lists the open routes by class and warns that config and provider routes are open beyond loopback', async (t) => {
  const [info, warning, ...rest] = await summary(t, { auth: { mode: 'ops' }, server: { host: '0.0.0.0' } });
  t.deepEqual(rest, []);
  t.is(info.level, 30);
  t.is(info.auth_mode, 'ops');
  t.regex(String(info.admin_token_file), /auth\/initial-admin-token$/);
  t.true(String(info.msg).includes(String(info.admin_token_file)), 'the message says where the admin token is');
  const open = info.open_routes as Record<string, string[]>;
  t.true(open.public.includes('GET /api/health'));
  t.true(open.provider.includes('GET /api/v1/proxy-config'), 'no provider token: the provider endpoint is open');
  t.true(open.config.includes('GET /api/middlewares'));
  // API.md §2.3: in ops mode configuration writes are open too, operations are not
  t.true(open.config.includes('POST /api/middlewares'));
  t.false(Object.values(open).flat().includes('POST /api/backup'), 'operations need a token in ops mode');
  t.is(warning.level, 40);
  t.regex(String(warning.msg), /not loopback/);
  t.deepEqual([...(warning.classes as string[])].sort(), ['config', 'provider']);
});

test('ops mode on loopback: no warning', async (t) => {
  const lines = await summary(t, { auth: { mode: 'ops' }, server: { host: '127.0.0.1' } });
  t.is(lines.length, 1);
  t.is(lines[0].level, 30);
});

test('all mode with a provider token: only public routes are open, no warning on 0.0.0.0', async (t) => {
  const lines = await summary(t, {
    auth: { mode: 'all' },
    provider: { token: 'p'.repeat(32) },
    server: { host: '0.0.0.0' },
  });
  t.is(lines.length, 1);
  t.deepEqual(Object.keys(lines[0].open_routes as object), ['public']);
});

test('off mode: every route is open, and the warning names AUTH_MODE', async (t) => {
  const [info, warning] = await summary(t, { auth: { mode: 'off' }, server: { host: '::' } });
  t.regex(String(info.open_routes), /^all \d+ routes$/);
  t.is(info.admin_token_file, null);
  t.regex(String(warning.msg), /AUTH_MODE=ops/);
});

test('loopback addresses', (t) => {
  t.true(['127.0.0.1', '::1', '[::1]', 'localhost', '127.0.0.53'].every(isLoopback));
  t.false(['0.0.0.0', '::', '192.0.2.1', 'stack-manager'].some(isLoopback));
});
