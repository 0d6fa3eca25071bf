/**
 * GET /metrics (API.md §4.22) scraped from a real listening app after real work: requests on real
 * sockets, provider polls (200 and 304), a discovery sync and generations, an API write, jobs that
 * succeed and fail. The text is parsed as a scraper would (prometheus-text.ts) and the values
 * compared with the work done; label values are route patterns, never URLs.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { harness } from '../resources/support.ts';
import { waitFor } from '../helpers/wait.ts';
import { parsePrometheusText } from './prometheus-text.ts';

/** What Prometheus 2.x/3.x sends: a `version=` parameter that is not our API version (§2.2). */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

async function scrape(base: string, headers: Record<string, string> = {}) {
  const reply = await fetch(`${base}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT, ...headers } });
  return { reply, text: await reply.text() };
}

test('GET /metrics counts real requests, provider polls, generations, syncs, writes and jobs', async (t) => {
  const { app } = await harness(t);
  const base = await listen(app);

  t.is((await fetch(`${base}/api/health`)).status, 200);
  t.is((await fetch(`${base}/api/resources/no-such-resource-xyz`)).status, 404);
  t.is((await fetch(`${base}/api/nothing-here/secret-looking-path`)).status, 404);
  const created = await fetch(`${base}/api/middlewares`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 'metrics-headers',
      name: 'metrics-headers',
      type: 'headers',
      config: { customRequestHeaders: { 'X-A': '1' } },
    }),
  });
  t.is(created.status, 201, await created.text());
  // the write regenerates: wait for the document that holds it, then poll it twice (200, then 304)
  const document = await waitFor(async () => {
    const reply = await fetch(`${base}/api/v1/proxy-config`, { headers: { 'user-agent': 'Traefik/3.7.15' } });
    const body = Buffer.from(await reply.arrayBuffer());
    return body.includes('metrics-headers') ? { etag: reply.headers.get('etag')!, bytes: body.length } : null;
  }, 2000);
  const notModified = await fetch(`${base}/api/v1/proxy-config`, {
    headers: { 'if-none-match': document.etag, 'user-agent': 'Traefik/3.7.15' },
  });
  t.is(notModified.status, 304);

  const ok = app.jobs.start({ kind: 'metrics_test', params: {}, steps: [] }, async () => undefined);
  const failing = app.jobs.start({ kind: 'metrics_test', params: {}, steps: [] }, async () => {
    throw new Error('injected');
  });
  await waitFor(() => app.jobs.get(ok.id).status === 'succeeded' && app.jobs.get(failing.id).status === 'failed', 100);

  const { reply, text } = await scrape(base);
  t.is(reply.status, 200, text);
  t.regex(reply.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const metrics = parsePrometheusText(text);

  // process and Node defaults (prom-client)
  t.true(metrics.find('process_cpu_user_seconds_total').length === 1);
  t.true(metrics.value('nodejs_heap_size_total_bytes') > 0);

  // requests: route patterns, `unmatched` for no route, never the URL
  t.true(
    metrics.value('stackmanager_http_requests_total', { route: '/api/health', method: 'GET', status: '200' }) >= 1,
  );
  t.is(
    metrics.value('stackmanager_http_requests_total', { route: '/api/resources/:id', method: 'GET', status: '404' }),
    1,
  );
  t.is(metrics.value('stackmanager_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
  t.is(
    metrics.value('stackmanager_http_requests_total', { route: '/api/middlewares', method: 'POST', status: '201' }),
    1,
  );
  t.false(text.includes('secret-looking-path') || text.includes('no-such-resource-xyz'));
  const requestCount = metrics.find('stackmanager_http_requests_total').reduce((sum, s) => sum + s.value, 0);
  t.is(metrics.value('stackmanager_http_request_duration_seconds_count'), requestCount);
  t.is(metrics.value('stackmanager_http_request_duration_seconds_bucket', { le: '+Inf' }), requestCount);
  t.is(metrics.types.get('stackmanager_http_request_duration_seconds'), 'histogram');

  // provider: polls per target, instance and status; generations; document size
  const polls = { target: 'default', instance: '127.0.0.1' };
  t.true(metrics.value('stackmanager_provider_polls_total', { ...polls, status: '200' }) >= 1);
  t.is(metrics.value('stackmanager_provider_polls_total', { ...polls, status: '304' }), 1);
  const generations = metrics.value('stackmanager_provider_generations_total');
  t.true(generations >= 2, `startup and the middleware write: ${generations}`);
  t.is(metrics.value('stackmanager_provider_generation_duration_seconds_count'), generations);
  t.is(metrics.value('stackmanager_provider_document_bytes', { target: 'default' }), document.bytes);

  // upstream, store, live state, jobs, cluster
  t.true(metrics.value('stackmanager_upstream_syncs_total', { source: 'pangolin', result: 'ok' }) >= 1);
  const lastSync = metrics.value('stackmanager_upstream_last_success_timestamp_seconds', { source: 'pangolin' });
  t.true(Math.abs(lastSync - Date.now() / 1000) < 600, String(lastSync));
  t.is(metrics.value('stackmanager_store_writes_total', { collection: 'middlewares', source: 'api' }), 1);
  t.is(metrics.value('stackmanager_invalid_files'), 0);
  const states = metrics.find('stackmanager_resources');
  t.deepEqual(states.map((s) => s.labels.state).sort(), [
    'disabled',
    'live',
    'missing',
    'outdated',
    'unknown',
    'warning',
  ]);
  t.is(
    states.reduce((sum, s) => sum + s.value, 0),
    app.resources.list().length,
  );
  t.true(app.resources.list().length > 0);
  const findings = metrics.find('stackmanager_findings').reduce((sum, s) => sum + s.value, 0);
  t.is(findings, app.liveStatus.diagnosis().findings.length);
  t.is(metrics.value('stackmanager_jobs_total', { kind: 'metrics_test', status: 'succeeded' }), 1);
  t.is(metrics.value('stackmanager_jobs_total', { kind: 'metrics_test', status: 'failed' }), 1);
  t.is(metrics.value('stackmanager_cluster_is_leader'), 1);
  // no backup yet, no certificate source configured: the families are there, without samples
  for (const family of [
    'stackmanager_backup_last_success_timestamp_seconds',
    'stackmanager_certificate_not_after_timestamp_seconds',
    'stackmanager_notifications_total',
  ])
    t.truthy(metrics.types.get(family), family);
  t.deepEqual(metrics.find('stackmanager_certificate_not_after_timestamp_seconds'), []);

  // counters move with the work: one more request and one more poll
  await fetch(`${base}/api/health`);
  await fetch(`${base}/api/v1/proxy-config`, {
    headers: { 'if-none-match': document.etag, 'user-agent': 'Traefik/3.7.15' },
  });
  const again = parsePrometheusText((await scrape(base)).text);
  t.is(
    again.value('stackmanager_http_requests_total', { route: '/api/health', method: 'GET', status: '200' }),
    metrics.value('stackmanager_http_requests_total', { route: '/api/health', method: 'GET', status: '200' }) + 1,
  );
  t.is(again.value('stackmanager_provider_polls_total', { ...polls, status: '304' }), 2);
  // the scrape itself is a request like any other
  t.true(again.value('stackmanager_http_requests_total', { route: '/metrics', method: 'GET', status: '200' }) >= 1);
});

test('a backup sets the backup timestamp', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  const created = await fetch(`${base}/api/backup/create`, { method: 'POST' });
  t.true(created.status < 300, await created.text());
  const metrics = parsePrometheusText((await scrape(base)).text);
  const at = metrics.value('stackmanager_backup_last_success_timestamp_seconds');
  t.true(Math.abs(at - Date.now() / 1000) < 600, String(at));
});

test('GET /metrics is class O: 401 without a token in auth mode ops, 200 with one; public with metrics.public', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'ops' } } });
  const base = await listen(app);
  const anonymous = await scrape(base);
  t.is(anonymous.reply.status, 401);
  t.is(JSON.parse(anonymous.text).id, 'auth_failed');
  t.regex(anonymous.reply.headers.get('www-authenticate') ?? '', /^Bearer/);
  const token = (await readFile(path.join(app.store.dataDir, 'auth', 'initial-admin-token'), 'utf8')).trim();
  const authorised = await scrape(base, { authorization: `Bearer ${token}` });
  t.is(authorised.reply.status, 200);
  t.true(parsePrometheusText(authorised.text).types.has('stackmanager_http_requests_total'));

  const open = await build(t, { config: { auth: { mode: 'all' }, metrics: { public: true } } });
  const openBase = await listen(open);
  const scraped = await scrape(openBase);
  t.is(scraped.reply.status, 200);
  t.true(parsePrometheusText(scraped.text).types.has('stackmanager_cluster_is_leader'));
  // the API itself stays closed in that mode
  t.is((await fetch(`${openBase}/api/middlewares`)).status, 401);
});
