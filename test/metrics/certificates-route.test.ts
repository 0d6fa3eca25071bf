/**
 * GET /api/certificates (docs/API.md "Certificates"): the expiry check's last result — when it ran,
 * how each source fared, every certificate soonest first with days left — from an acme.json fixture
 * and a local Traefik-style metrics page, and from a real Traefik. `?refresh=true` checks now;
 * concurrent refreshes share one check; no source → 503 not_configured.
 */
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../core/app.ts';
import { builtinGroups } from '../../plugins/index.ts';
import type { CertificateReport } from '../../plugins/metrics/index.ts';
import { tempDir, testConfig } from '../helpers/build.ts';
import { acmeJson, makeCertificate, traefikServing } from '../helpers/certificates.ts';
import { traefikTest } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<unknown>;
const DAY_MS = 86_400_000;

interface Started {
  app: FastifyInstance;
  /** GET /api/certificates requests that reached their handler */
  handled: () => number;
}

async function start(t: ExecutionContext, settings: Record<string, unknown>): Promise<Started> {
  const dir = await tempDir(t);
  const app = await buildApp({
    // a long interval: only the check at start and the refreshes run
    config: testConfig(path.join(dir, 'data'), {
      auth: { mode: 'off' },
      certs: { check_interval_s: 3600 },
      ...settings,
    }),
    groups: builtinGroups,
    logger: false,
  });
  t.teardown(() => app.close());
  let handled = 0;
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.url === '/api/certificates') handled += 1;
  });
  await app.ready();
  return { app, handled: () => handled };
}

/** A Traefik-style metrics page on 127.0.0.1 whose body and status the test sets; `hold` delays answers. */
async function metricsPage(t: ExecutionContext) {
  const page = {
    status: 200,
    body: '',
    hits: 0,
    held: [] as (() => void)[],
    hold: false,
    url: '',
    release() {
      for (const answer of page.held.splice(0)) answer();
    },
  };
  const server = http.createServer((_request, response) => {
    page.hits += 1;
    const answer = () => response.writeHead(page.status, { 'content-type': 'text/plain' }).end(page.body);
    if (page.hold) page.held.push(answer);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  page.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  return page;
}

const metricLine = (cn: string, sans: string, notAfter: number) =>
  `traefik_tls_certs_not_after{cn="${cn}",sans="${sans}",serial="0${notAfter}"} ${notAfter}`;

async function getReport(app: FastifyInstance, query = ''): Promise<CertificateReport> {
  const reply = await app.inject({ url: `/api/certificates${query}` });
  if (reply.statusCode !== 200) throw new Error(`GET /api/certificates${query} → ${reply.statusCode} ${reply.body}`);
  return reply.json<CertificateReport>();
}

test.serial(
  'acme.json + metrics page: every certificate soonest first with days left, sources ok; refresh picks up a change, concurrent refreshes share one read',
  async (t) => {
    const dir = await tempDir(t);
    const now = Date.now();
    const soon = makeCertificate('soon.example.test', new Date(now + 2 * DAY_MS + 3_600_000));
    const later = makeCertificate('later.example.test', new Date(now + 40 * DAY_MS + 3_600_000));
    const acmePath = path.join(dir, 'acme.json');
    await writeFile(acmePath, acmeJson([later, soon]), { mode: 0o600 });
    const page = await metricsPage(t);
    const edge = Math.floor((now + 10 * DAY_MS + 3_600_000) / 1000);
    page.body = [
      '# TYPE traefik_tls_certs_not_after gauge',
      metricLine('edge.example.test', 'edge.example.test,www.edge.example.test', edge),
      'traefik_entrypoint_requests_total{code="200"} 3',
      '',
    ].join('\n');

    const { app, handled } = await start(t, { proxy: { acme_path: acmePath, metrics_url: page.url } });
    // the check at start
    await waitFor(async () => (await getReport(app)).checked_at !== null, 5000);
    const report = await getReport(app);
    t.true(Date.parse(report.checked_at!) <= Date.now());
    t.deepEqual(report.sources, [
      { source: 'metrics', url_or_path: page.url, ok: true, error: null },
      { source: 'acme', url_or_path: acmePath, ok: true, error: null },
    ]);
    t.deepEqual(report.certificates, [
      {
        cn: 'soon.example.test',
        not_after: new Date(soon.notAfter * 1000).toISOString(),
        days_left: 2,
        source: 'acme',
        resolver: 'letsencrypt',
        domains: ['soon.example.test'],
      },
      {
        cn: 'edge.example.test',
        not_after: new Date(edge * 1000).toISOString(),
        days_left: 10,
        source: 'metrics',
        sans: ['edge.example.test', 'www.edge.example.test'],
      },
      {
        cn: 'later.example.test',
        not_after: new Date(later.notAfter * 1000).toISOString(),
        days_left: 40,
        source: 'acme',
        resolver: 'letsencrypt',
        domains: ['later.example.test'],
      },
    ]);

    // soon is renewed in acme.json: without refresh the last check stands, with refresh it is read now
    const renewed = makeCertificate('soon.example.test', new Date(now + 89 * DAY_MS + 3_600_000));
    await writeFile(acmePath, acmeJson([later, renewed]), { mode: 0o600 });
    t.is((await getReport(app)).certificates[0].cn, 'soon.example.test');
    const hitsBefore = page.hits;
    const refreshed = await getReport(app, '?refresh=true');
    t.is(page.hits, hitsBefore + 1);
    t.deepEqual(
      refreshed.certificates.map((view) => [view.cn, view.days_left]),
      [
        ['edge.example.test', 10],
        ['later.example.test', 40],
        ['soon.example.test', 89],
      ],
    );
    t.true(Date.parse(refreshed.checked_at!) >= Date.parse(report.checked_at!));

    // two refreshes while Traefik is slow: one read, both answers carry its result
    page.hold = true;
    const handledBefore = handled();
    const first = getReport(app, '?refresh=true');
    const second = getReport(app, '?refresh=true');
    await waitFor(() => handled() === handledBefore + 2 && page.held.length === 1, 5000);
    page.body = metricLine('edge.example.test', 'edge.example.test', edge + 86_400) + '\n';
    page.release();
    const answers = await Promise.all([first, second]);
    t.is(page.hits, hitsBefore + 2);
    for (const answer of answers)
      t.deepEqual(answer.certificates.find((view) => view.cn === 'edge.example.test')?.days_left, 11);
  },
);

test.serial(
  'a failing source is reported (ok: false, error, no credentials) and the other one still lists',
  async (t) => {
    const dir = await tempDir(t);
    const acmePath = path.join(dir, 'acme.json');
    const only = makeCertificate('only.example.test', new Date(Date.now() + 20 * DAY_MS + 3_600_000));
    await writeFile(acmePath, acmeJson([only]), { mode: 0o600 });
    const page = await metricsPage(t);
    page.status = 500;
    page.body = 'boom';
    const { app } = await start(t, { proxy: { acme_path: acmePath, metrics_url: page.url } });
    const report = await getReport(app, '?refresh=true');
    t.deepEqual(report.sources, [
      { source: 'metrics', url_or_path: page.url, ok: false, error: `${page.url} answered 500` },
      { source: 'acme', url_or_path: acmePath, ok: true, error: null },
    ]);
    t.deepEqual(
      report.certificates.map((view) => [view.cn, view.days_left, view.source]),
      [['only.example.test', 20, 'acme']],
    );

    // a metrics URL with user info: shown without it, even in the error
    await app.close();
    const secretUrl = page.url.replace('http://', 'http://ops:s3cret@');
    const missing = path.join(dir, 'missing.json');
    const other = await start(t, { proxy: { acme_path: missing, metrics_url: secretUrl } });
    const withSecret = await getReport(other.app, '?refresh=true');
    t.false(JSON.stringify(withSecret).includes('s3cret'));
    t.is(withSecret.sources[0].url_or_path, page.url);
    t.false(withSecret.sources[1].ok);
    t.regex(withSecret.sources[1].error ?? '', /ENOENT/);
    t.deepEqual(withSecret.certificates, []);
  },
);

test('no proxy.metrics_url and no proxy.acme_path → 503 not_configured; bad query → 422', async (t) => {
  const { app } = await start(t, { proxy: { acme_path: '', metrics_url: '' } });
  const reply = await app.inject({ url: '/api/certificates' });
  t.is(reply.statusCode, 503);
  t.is(reply.json<{ id: string }>().id, 'not_configured');
  t.regex(reply.json<{ message: string }>().message, /proxy\.metrics_url/);
  const bad = await app.inject({ url: '/api/certificates?refresh=maybe' });
  t.is(bad.statusCode, 422);
  t.is(bad.json<{ id: string }>().id, 'validation_failed');
});

traefikTest(test)('a real Traefik: its certificate is listed from the metrics with days left and SANs', async (t) => {
  const certificate = makeCertificate('edge.example.test', new Date(Date.now() + 5 * DAY_MS + 3_600_000));
  const traefik = await traefikServing(t, certificate);
  const metricsUrl = `${traefik.apiBase}/metrics`;
  const { app } = await start(t, { proxy: { metrics_url: metricsUrl } });
  const report = await waitFor(
    async () => {
      const answer = await getReport(app, '?refresh=true');
      return answer.certificates.some((view) => view.cn === 'edge.example.test') ? answer : null;
    },
    5000,
    200,
  );
  t.deepEqual(report.sources, [{ source: 'metrics', url_or_path: metricsUrl, ok: true, error: null }]);
  t.deepEqual(
    report.certificates.find((view) => view.cn === 'edge.example.test'),
    {
      cn: 'edge.example.test',
      not_after: new Date(certificate.notAfter * 1000).toISOString(),
      days_left: 5,
      source: 'metrics',
      sans: ['edge.example.test'],
    },
  );
});
