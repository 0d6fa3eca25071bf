/**
 * Access-log statistics (API.md §4.13) from a real Traefik's access log: requests with known status
 * codes go through Traefik's entry points (200 from a backend, 503 from a backend that answers it,
 * 401 from a basicAuth middleware assigned through our API, 404 for a host no router has, 302 from
 * Pangolin's web → websecure redirect router), then `/api/logs/proxy/advanced` must count exactly
 * what was sent, for Traefik's JSON format and its common (CLF) format.
 */
import { readFile, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse, stringify } from 'yaml';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN, type TraefikRequest } from '../helpers/traefik.ts';
import { tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;
let accessLog: string;

// user `e2e`, password `secret` (openssl passwd -apr1 -salt e2esalt0 secret)
const USERS = ['e2e:$apr1$e2esalt0$gsRAEfosjHJ6pkNquaVY7.'];

/** What the test sends: count × request, and the status Traefik must log for it. */
const TRAFFIC: Array<{ count: number; status: number; request: TraefikRequest; path: string }> = [
  { count: 6, status: 200, path: '/one', request: { entryPoint: 'websecure', host: 'app.test', path: '/one' } },
  { count: 4, status: 200, path: '/two', request: { entryPoint: 'websecure', host: 'app.test', path: '/two?q=1' } },
  { count: 5, status: 503, path: '/down', request: { entryPoint: 'websecure', host: 'down.test', path: '/down' } },
  { count: 3, status: 401, path: '/secret', request: { entryPoint: 'websecure', host: 'auth.test', path: '/secret' } },
  {
    count: 2,
    status: 200,
    path: '/secret',
    request: {
      entryPoint: 'websecure',
      host: 'auth.test',
      path: '/secret',
      method: 'POST',
      body: 'x',
      headers: { authorization: `Basic ${Buffer.from('e2e:secret').toString('base64')}` },
    },
  },
  { count: 7, status: 404, path: '/nope', request: { entryPoint: 'websecure', host: 'unknown.test', path: '/nope' } },
  { count: 1, status: 302, path: '/moved', request: { entryPoint: 'web', host: 'app.test', path: '/moved' } },
];
const TOTAL = TRAFFIC.reduce((sum, entry) => sum + entry.count, 0);

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  const context = hook.context(t);
  // Stack Manager reads its access-log path once at startup, before Traefik exists: choose it here
  accessLog = path.join(await tempDir(context, 'sm-access-'), 'access.log');
  stack = await startStack(context, {
    backends: ['a', 'down'],
    resources: [
      { id: 1, name: 'app', host: 'app.test', backends: ['a'] },
      { id: 2, name: 'down', host: 'down.test', backends: ['down'] },
      { id: 3, name: 'auth', host: 'auth.test', backends: ['a'] },
    ],
    config: { logs: { proxy_access_log: accessLog } },
    traefik: {
      editStatic: (config) => {
        config.accessLog.filePath = accessLog;
      },
    },
  });
  stack.backends[1].status = 503;
  const created = await stack.sm.call('POST', '/api/middlewares', {
    id: 'e2e-basic',
    name: 'e2e basic',
    type: 'basicAuth',
    config: { users: USERS },
  });
  if (created.status !== 201) throw new Error(`POST middleware: ${created.status} ${created.text}`);
  const assigned = await stack.sm.call('POST', '/api/resources/3-auth-router/middlewares', {
    middleware_id: 'e2e-basic',
    priority: 100,
  });
  if (assigned.status !== 200) throw new Error(`assign: ${assigned.status} ${assigned.text}`);
  await stack.traefik.waitForReply({ entryPoint: 'websecure', host: 'auth.test' }, (r) => r.status === 401);
});

/** Sends TRAFFIC through Traefik on an empty access log and waits until Traefik has written every line. */
async function sendTraffic(t: { is(a: unknown, b: unknown, m?: string): void }): Promise<number> {
  let bytes = 0;
  await truncate(accessLog, 0); // Traefik appends (O_APPEND): its next line lands at the new end
  for (const entry of TRAFFIC) {
    for (let i = 0; i < entry.count; i++) {
      const reply = await stack.traefik.request(entry.request);
      t.is(reply.status, entry.status, `${entry.request.host}${entry.request.path}`);
      bytes += Buffer.byteLength(reply.body);
    }
  }
  // Traefik writes each line as the request ends (accessLog.bufferingSize 0): expected within ~a second
  await waitFor(async () => (await readFile(accessLog, 'utf8')).split('\n').filter(Boolean).length >= TOTAL, 1_000, 20);
  return bytes;
}

/** The counts the stats must show: by status code, class, path (without query), host and method. */
function expected() {
  const tally = (key: (entry: (typeof TRAFFIC)[number]) => string) => {
    const counts: Record<string, number> = {};
    for (const entry of TRAFFIC) counts[key(entry)] = (counts[key(entry)] ?? 0) + entry.count;
    return counts;
  };
  const asTop = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  const statusCodes = tally((entry) => String(entry.status));
  const classes = tally((entry) => `${String(entry.status)[0]}xx`);
  return {
    statusCodes,
    classes,
    paths: asTop(tally((entry) => entry.path)),
    hosts: asTop(tally((entry) => entry.request.host)),
    methods: tally((entry) => entry.request.method ?? 'GET'),
    errors: TRAFFIC.filter((entry) => entry.status >= 400).reduce((sum, entry) => sum + entry.count, 0),
  };
}

async function checkStats(t: any, format: 'json' | 'clf', bytesSent: number): Promise<void> {
  const reply = await stack.sm.call('GET', '/api/logs/proxy/advanced?top=20');
  t.is(reply.status, 200, reply.text);
  const stats = reply.json;
  const want = expected();
  t.is(stats.source, `file:${accessLog}`);
  t.is(stats.format, format);
  t.is(stats.lines_read, TOTAL);
  t.is(stats.lines_skipped, 0);
  t.is(stats.requests, TOTAL);
  t.deepEqual(stats.status_codes, want.statusCodes);
  for (const [statusClass, count] of Object.entries(want.classes)) t.is(stats.status_classes[statusClass], count);
  t.deepEqual(stats.top_paths, want.paths);
  t.deepEqual(stats.methods, want.methods);
  t.is(stats.error_rate, want.errors / TOTAL);
  t.is(stats.bytes_sent, bytesSent); // the body bytes the client received
  t.deepEqual(stats.top_ips, [{ value: '127.0.0.1', count: TOTAL }]);
  if (format === 'json') t.deepEqual(stats.top_hosts, want.hosts);
  const minutes = (stats.requests_per_minute as Array<{ count: number }>).reduce((sum, m) => sum + m.count, 0);
  t.is(minutes, TOTAL);
  // the routers Traefik names: ours for the three resources, Pangolin's redirect router; none for the 404s
  const routers = Object.fromEntries(
    (stats.top_routers as Array<{ value: string; count: number }>).map((r) => [r.value, r.count]),
  );
  t.is(routers['1-app-router@http'], 10);
  t.is(routers['2-down-router@http'], 5);
  t.is(routers['3-auth-router@http'], 5);
  t.is(routers['1-app-router-redirect@http'], 1);
  t.is(
    Object.values(routers).reduce((sum, n) => sum + n, 0),
    TOTAL - 7,
    JSON.stringify(stats.top_routers),
  );
}

e2e('JSON access log: totals, status codes, top paths and routers equal what was sent', async (t) => {
  const bytes = await sendTraffic(t);
  await checkStats(t, 'json', bytes);
});

e2e('common (CLF) access log: the same traffic gives the same counts', async (t) => {
  // Traefik reads its static configuration only at start: switch the format and restart it
  const staticFile = path.join(stack.traefik.dir, 'traefik.yml');
  const config = parse(await readFile(staticFile, 'utf8'));
  config.accessLog.format = 'common';
  await writeFile(staticFile, stringify(config));
  await stack.traefik.restart();
  await stack.traefik.waitForReply({ entryPoint: 'websecure', host: 'auth.test' }, (r) => r.status === 401);
  const bytes = await sendTraffic(t);
  t.regex((await readFile(accessLog, 'utf8')).split('\n')[0], /^127\.0\.0\.1 - - \[/);
  await checkStats(t, 'clf', bytes);
});
