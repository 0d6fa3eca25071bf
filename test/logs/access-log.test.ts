/** GET /api/logs/proxy/advanced: access-log statistics from a configured file (API.md §4.13). */
import test, { type ExecutionContext } from 'ava';
import { chmod, copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { fixture } from '../helpers/shared.ts';

const FIXTURES = fixture('access-logs');
const JSON_LOG = path.join(FIXTURES, 'sample.json.log');
const CLF_LOG = path.join(FIXTURES, 'sample.clf.log');

type Stats = Record<string, any>;

async function stats(
  t: ExecutionContext,
  file: string,
  query = '',
  logs: Record<string, unknown> = {},
): Promise<{ status: number; body: Stats }> {
  const app: FastifyInstance = await build(t, {
    config: { auth: { mode: 'off' }, logs: { proxy_access_log: file, ...logs } },
  });
  const reply = await app.inject({ method: 'GET', url: `/api/logs/proxy/advanced${query}` });
  return { status: reply.statusCode, body: reply.json() };
}

/** A JSON access-log line as Traefik writes it (only the fields the stats read). */
const jsonLine = (start: string, status: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    ClientHost: '203.0.113.7',
    DownstreamContentSize: 100,
    DownstreamStatus: status,
    Duration: 2_000_000,
    RequestHost: 'app.example.com',
    RequestMethod: 'GET',
    RequestPath: '/x?y=1',
    RouterName: 'app@http',
    ServiceName: 'app@http',
    StartUTC: start,
    ...extra,
  });

test('GET /api/logs/proxy/advanced counts the JSON fixture as the expected stats say', async (t) => {
  const { status, body } = await stats(t, JSON_LOG, '?top=5');
  t.is(status, 200);
  t.like(body, {
    source: `file:${JSON_LOG}`,
    format: 'json',
    lines_read: 200,
    lines_skipped: 0,
    requests: 200,
    status_classes: { '1xx': 1, '2xx': 113, '3xx': 45, '4xx': 37, '5xx': 4 },
    bytes_sent: 76452380,
    error_rate: (37 + 4) / 200,
    from: '2026-11-22T10:00:00.287Z',
  });
  t.deepEqual(
    body.top_ips.map((e: Stats) => [e.value, e.count]),
    [
      ['203.0.113.66', 40],
      ['198.51.100.39', 14],
      ['203.0.113.56', 13],
      ['198.51.100.128', 12],
      ['198.51.100.154', 11],
    ],
  );
  t.deepEqual(
    body.top_hosts.map((e: Stats) => [e.value, e.count]),
    [
      ['cloud.example.com', 81],
      ['media.example.com', 33],
      ['pangolin.example.com', 32],
      ['grafana.example.com', 29],
      ['198.51.100.10', 24],
    ],
  );
  t.deepEqual(
    body.top_routers.map((e: Stats) => [e.value, e.count]),
    [
      ['1-Nextcloud-router@http', 76],
      ['6-Jellyfin-Media-router@http', 31],
      ['2-Grafana-router@http', 27],
      ['next-router@file', 19],
      ['api-router@file', 11],
    ],
  );
  t.is(body.top_services.length, 5);
  t.like(body.latency_ms, { p50: 20.855699, p99: 31093.348276, max: 59738.231168 });
  t.true(
    body.top_paths.every((e: Stats) => !e.value.includes('?')),
    'paths without query',
  );
  const perMinute = body.requests_per_minute.reduce((sum: number, e: Stats) => sum + e.count, 0);
  t.is(perMinute, 200);
  t.deepEqual(
    body.requests_per_minute.map((e: Stats) => e.minute),
    ['2026-11-22T10:00:00.000Z', '2026-11-22T10:01:00.000Z'],
  );
  t.is(
    Object.values(body.status_codes as Record<string, number>).reduce((a, b) => a + b, 0),
    200,
  );
  t.is(
    Object.values(body.methods as Record<string, number>).reduce((a, b) => a + b, 0),
    200,
  );
});

test('GET /api/logs/proxy/advanced reads Common Log Format: no hosts or services, integer latencies', async (t) => {
  const { status, body } = await stats(t, CLF_LOG, '?top=5');
  t.is(status, 200);
  t.like(body, {
    format: 'clf',
    lines_read: 200,
    lines_skipped: 0,
    requests: 200,
    bytes_sent: 76452380,
    status_classes: { '4xx': 37, '5xx': 4 },
  });
  t.deepEqual(body.top_hosts, []);
  t.deepEqual(body.top_services, []);
  t.is(body.top_routers[0].value, '1-Nextcloud-router@http');
  t.is(body.top_routers[0].count, 76);
  t.like(body.latency_ms, { p50: 20, p99: 31093, max: 59738 });
  t.is(body.from, '2026-11-22T10:00:00.000Z');
});

test('GET /api/logs/proxy/advanced answers format mixed and counts unparsable lines in lines_skipped', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  const json = (await readFile(JSON_LOG, 'utf8')).split('\n').slice(0, 3);
  const clf = (await readFile(CLF_LOG, 'utf8')).split('\n').slice(0, 2);
  await writeFile(file, [...json, 'garbage line', '{"not":"traefik"}', '', ...clf, '{broken json', ''].join('\r\n'));
  const { status, body } = await stats(t, file);
  t.is(status, 200);
  t.like(body, { format: 'mixed', lines_read: 8, lines_skipped: 3, requests: 5 });
});

test('GET /api/logs/proxy/advanced counts only requests inside since/until', async (t) => {
  const { body } = await stats(t, JSON_LOG, '?since=2026-11-22T10:01:00Z&until=2026-11-22T10:01:10.000Z');
  const { body: all } = await stats(t, JSON_LOG);
  t.true(body.requests > 0 && body.requests < 200);
  t.is(body.lines_read, 200, 'lines outside the window are read but not counted');
  t.true(body.from >= '2026-11-22T10:01:00.000Z' && body.to <= '2026-11-22T10:01:10.000Z');
  t.deepEqual(body.requests_per_minute, [{ minute: '2026-11-22T10:01:00.000Z', count: body.requests }]);
  t.true(all.requests_per_minute[1].count >= body.requests);
});

test('GET /api/logs/proxy/advanced takes relative since values against the clock', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  const now = Date.now();
  const at = (agoMs: number) => new Date(now - agoMs).toISOString();
  await writeFile(
    file,
    [jsonLine(at(3 * 3_600_000), 200), jsonLine(at(30 * 60_000), 500), jsonLine(at(60_000), 404)].join('\n') + '\n',
  );
  const { body } = await stats(t, file, '?since=1h');
  t.like(body, { requests: 2, error_rate: 1, status_classes: { '4xx': 1, '5xx': 1, '2xx': 0 } });
  const { body: empty } = await stats(t, file, '?until=1d');
  t.like(empty, { requests: 0, error_rate: 0, from: null, to: null, format: 'json', bytes_sent: 0 });
  t.deepEqual(empty.latency_ms, { p50: null, p90: null, p95: null, p99: null, max: null });
});

test('GET /api/logs/proxy/advanced returns top entries by count, ties by value', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  const lines = [
    jsonLine('2026-01-01T00:00:00Z', 200, { ClientHost: '10.0.0.2' }),
    jsonLine('2026-01-01T00:00:01Z', 200, { ClientHost: '10.0.0.1' }),
    jsonLine('2026-01-01T00:00:02Z', 200, { ClientHost: '10.0.0.3' }),
    jsonLine('2026-01-01T00:00:03Z', 200, { ClientHost: '10.0.0.3' }),
  ];
  await writeFile(file, lines.join('\n'));
  const { body } = await stats(t, file, '?top=2');
  t.deepEqual(body.top_ips, [
    { value: '10.0.0.3', count: 2 },
    { value: '10.0.0.1', count: 1 },
  ]);
  t.deepEqual(body.top_paths, [{ value: '/x', count: 4 }]);
});

test('GET /api/logs/proxy/advanced computes nearest-rank percentiles', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  // durations 1..100 ms, shuffled order
  const lines = Array.from({ length: 100 }, (_, i) =>
    jsonLine('2026-01-01T00:00:00Z', 200, { Duration: (((i * 37) % 100) + 1) * 1_000_000 }),
  );
  await writeFile(file, lines.join('\n'));
  const { body } = await stats(t, file);
  t.deepEqual(body.latency_ms, { p50: 50, p90: 90, p95: 95, p99: 99, max: 100 });
});

test('GET /api/logs/proxy/advanced reads only the last logs.max_scan_bytes of the file', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  const old = Array.from({ length: 50 }, () => jsonLine('2026-01-01T00:00:00Z', 500));
  const recent = Array.from({ length: 10 }, () => jsonLine('2026-01-02T00:00:00Z', 200));
  const tail = recent.join('\n') + '\n';
  await writeFile(file, old.join('\n') + '\n' + tail);
  // the window starts 5 bytes inside the last old line: that cut line is dropped, not skipped
  const { body } = await stats(t, file, '', { max_scan_bytes: Buffer.byteLength(tail) + 5 });
  t.like(body, { requests: 10, lines_read: 10, lines_skipped: 0, status_classes: { '5xx': 0, '2xx': 10 } });
  // a window that starts exactly on a line boundary keeps its first line
  const { body: exact } = await stats(t, file, '', { max_scan_bytes: Buffer.byteLength(tail) });
  t.like(exact, { requests: 10, lines_skipped: 0 });
});

test('GET /api/logs/proxy/advanced answers 503 not_configured when the configured file cannot be read', async (t) => {
  const dir = await tempDir(t);
  const missing = await stats(t, path.join(dir, 'absent.log'));
  t.is(missing.status, 503);
  t.is(missing.body.id, 'not_configured');
  t.false(JSON.stringify(missing.body).includes('stack'), 'no stack trace');
  const directory = await stats(t, dir);
  t.is(directory.status, 503);
  t.is(directory.body.id, 'not_configured');
});

test('GET /api/logs/proxy/advanced reads an empty file as zero requests', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'access.log');
  await copyFile('/dev/null', file);
  await chmod(file, 0o644);
  const { status, body } = await stats(t, file);
  t.is(status, 200);
  t.like(body, { lines_read: 0, requests: 0, format: null, error_rate: 0 });
});

for (const query of [
  '?top=0',
  '?top=101',
  '?top=x',
  '?since=yesterday',
  '?until=5w',
  '?since=2026-13-45',
  '?since=2h&until=3h',
]) {
  test(`GET /api/logs/proxy/advanced${query} answers 422 validation_failed`, async (t) => {
    const { status, body } = await stats(t, JSON_LOG, query);
    t.is(status, 422);
    t.is(body.id, 'validation_failed');
    t.regex(body.details[0].path, /^\/query\/(top|since|until)$/);
  });
}

test('GET /api/logs/proxy/advanced needs an operations token in ops mode', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'ops' }, logs: { proxy_access_log: JSON_LOG } } });
  const reply = await app.inject({ method: 'GET', url: '/api/logs/proxy/advanced' });
  t.is(reply.statusCode, 401);
});
