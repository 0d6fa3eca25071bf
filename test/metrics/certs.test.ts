/**
 * Certificate expiry (API.md §4.21 `certs`, §4.22): acme.json and a real Traefik's Prometheus
 * endpoint are read, the gauge `stackmanager_certificate_not_after_timestamp_seconds{cn}` is set, and
 * a `certificate` event goes out once per threshold (14, 3, 0 days) per certificate, also across a
 * restart. The clock is the app's injectable one: days pass without waiting.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parse } from 'yaml';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../core/app.ts';
import { builtinGroups } from '../../plugins/index.ts';
import type { CertificateEvent } from '../../plugins/metrics/index.ts';
import { parseCertificateMetrics } from '../../plugins/metrics/cert-sources.ts';
import { CertificateCheck } from '../../plugins/metrics/cert-check.ts';
import { tempDir, testConfig } from '../helpers/build.ts';
import { acmeJson, makeCertificate, traefikServing } from '../helpers/certificates.ts';
import { traefikTest } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';
import { parsePrometheusText } from './prometheus-text.ts';

const test = anyTest as TestFn<unknown>;
const DAY_MS = 86_400_000;

interface Started {
  app: FastifyInstance;
  events: CertificateEvent[];
}

/** An app whose `certificate` events are recorded from the first one (the check runs at ready). */
async function start(
  t: ExecutionContext,
  dataDir: string,
  settings: Record<string, unknown>,
  now: () => Date,
): Promise<Started> {
  const app = await buildApp({
    config: testConfig(dataDir, { auth: { mode: 'off' }, certs: { check_interval_s: 2 }, ...settings }),
    groups: builtinGroups,
    logger: false,
    now,
  });
  t.teardown(() => app.close());
  const events: CertificateEvent[] = [];
  const publish = app.events.publish.bind(app.events);
  app.events.publish = (type, data) => {
    if (type === 'certificate') events.push(data as CertificateEvent);
    publish(type, data);
  };
  await app.ready();
  return { app, events };
}

async function gauge(app: FastifyInstance): Promise<Map<string, number>> {
  const reply = await app.inject({ url: '/metrics' });
  const metrics = parsePrometheusText(reply.body);
  return new Map(
    metrics
      .find('stackmanager_certificate_not_after_timestamp_seconds')
      .map((sample) => [sample.labels.cn, sample.value]),
  );
}

test.serial(
  'acme.json: 13 days → threshold 14, expired → threshold 0, once each, not again after a restart; 11 days later → threshold 3',
  async (t) => {
    const dir = await tempDir(t);
    const dataDir = path.join(dir, 'data');
    const acmePath = path.join(dir, 'acme.json');
    let clock = Date.now();
    const now = () => new Date(clock);
    const soon = makeCertificate('soon.example.test', new Date(clock + 13 * DAY_MS + 3_600_000));
    const expired = makeCertificate('gone.example.test', new Date(clock - DAY_MS / 2));
    const later = makeCertificate('later.example.test', new Date(clock + 60 * DAY_MS + 3_600_000));
    await writeFile(acmePath, acmeJson([soon, expired, later]), { mode: 0o600 });
    const settings = { proxy: { acme_path: acmePath } };

    const first = await start(t, dataDir, settings, now);
    await twoChecks(first.app);
    const byCn = new Map(first.events.map((event) => [event.cn, event]));
    t.deepEqual(byCn.get('soon.example.test'), {
      cn: 'soon.example.test',
      not_after: new Date(soon.notAfter * 1000).toISOString(),
      days_left: 13,
      threshold: 14,
      source: 'acme',
    });
    t.deepEqual(byCn.get('gone.example.test'), {
      cn: 'gone.example.test',
      not_after: new Date(expired.notAfter * 1000).toISOString(),
      days_left: -1,
      threshold: 0,
      source: 'acme',
    });
    const values = await gauge(first.app);
    t.is(values.get('soon.example.test'), soon.notAfter);
    t.is(values.get('gone.example.test'), expired.notAfter);
    t.is(values.get('later.example.test'), later.notAfter);
    // more checks: nothing new
    await twoChecks(first.app);
    t.is(first.events.length, 2);
    t.deepEqual(
      first.app.certificates.list().map((view) => [view.cn, view.days_left, view.source]),
      [
        ['gone.example.test', -1, 'acme'],
        ['soon.example.test', 13, 'acme'],
        ['later.example.test', 60, 'acme'],
      ],
    );
    // remembered in a data file (replicated in cluster mode: test/cluster/certificate-notices), private
    const notices = await stat(path.join(dataDir, 'metrics', 'certificate-notices.yaml'));
    t.is(notices.mode & 0o777, 0o600);
    await first.app.close();

    // a restart on the same data dir: the notices were kept, nothing is announced again
    const second = await start(t, dataDir, settings, now);
    await twoChecks(second.app);
    t.is((await gauge(second.app)).size, 3);
    t.deepEqual(second.events, []);

    // 11 days later the first certificate has 2 days left: threshold 3, once
    clock += 11 * DAY_MS;
    // the first check may have started before the clock moved: the second one started after
    await twoChecks(second.app);
    await twoChecks(second.app);
    t.deepEqual(second.events, [
      {
        cn: 'soon.example.test',
        not_after: new Date(soon.notAfter * 1000).toISOString(),
        days_left: 2,
        threshold: 3,
        source: 'acme',
      },
    ]);
  },
);

test.serial(
  'an upgrade keeps the record of the old .cache/certificate-notices.json: nothing announced again, the next threshold once',
  async (t) => {
    const dir = await tempDir(t);
    const dataDir = path.join(dir, 'data');
    const acmePath = path.join(dir, 'acme.json');
    let clock = Date.now();
    const now = () => new Date(clock);
    const soon = makeCertificate('old.example.test', new Date(clock + 5 * DAY_MS + 3_600_000));
    await writeFile(acmePath, acmeJson([soon]), { mode: 0o600 });
    // what a version before the cluster fix wrote: threshold 14 announced
    await mkdir(path.join(dataDir, '.cache'), { recursive: true });
    const legacy = { format: 1, notices: [{ cn: soon.cn, not_after: soon.notAfter, threshold: 14 }] };
    await writeFile(path.join(dataDir, '.cache', 'certificate-notices.json'), JSON.stringify(legacy), { mode: 0o600 });

    const { app, events } = await start(t, dataDir, { proxy: { acme_path: acmePath } }, now);
    await twoChecks(app);
    t.deepEqual(events, []);
    clock += 3 * DAY_MS;
    await twoChecks(app);
    await twoChecks(app);
    t.deepEqual(
      events.map((event) => [event.cn, event.days_left, event.threshold]),
      [['old.example.test', 2, 3]],
    );
    // the new record holds the threshold 3 notice
    const saved = parse(await readFile(path.join(dataDir, 'metrics', 'certificate-notices.yaml'), 'utf8'));
    t.deepEqual(saved.notices, [{ cn: soon.cn, not_after: soon.notAfter, threshold: 3 }]);
  },
);

/** Two checks in a row: the second starts after whatever was running when called. */
async function twoChecks(app: FastifyInstance): Promise<void> {
  await app.certificates.check();
  await app.certificates.check();
}

test('the Traefik metric parser reads cn with escapes and skips other series', (t) => {
  const text = [
    '# HELP traefik_tls_certs_not_after Certificate expiration timestamp',
    '# TYPE traefik_tls_certs_not_after gauge',
    'traefik_tls_certs_not_after{cn="a.example.test",sans="a.example.test,b.example.test",serial="1"} 1.796056938e+09',
    'traefik_tls_certs_not_after{cn="odd \\"quoted\\" \\\\ name",sans="",serial="2"} 1700000000',
    'traefik_tls_certs_not_after_other{cn="x"} 1',
    'traefik_entrypoint_requests_total{code="200",entrypoint="web",method="GET",protocol="http"} 3',
  ].join('\n');
  t.deepEqual(parseCertificateMetrics(text), [
    { cn: 'a.example.test', notAfter: 1796056938, source: 'metrics', sans: ['a.example.test', 'b.example.test'] },
    { cn: 'odd "quoted" \\ name', notAfter: 1700000000, source: 'metrics' },
  ]);
});

traefikTest(test)(
  'a real Traefik reporting a certificate that expires in 2 days → certificate event with threshold 3, gauge set',
  async (t) => {
    const dir = await tempDir(t);
    const certificate = makeCertificate('edge.example.test', new Date(Date.now() + 2 * DAY_MS + 3_600_000));
    const traefik = await traefikServing(t, certificate);
    const metricsUrl = `${traefik.apiBase}/metrics`;
    const { app, events } = await start(
      t,
      path.join(dir, 'data'),
      { proxy: { metrics_url: metricsUrl } },
      () => new Date(),
    );
    await waitFor(() => events.some((event) => event.cn === 'edge.example.test'), 3000);
    t.deepEqual(
      events.filter((event) => event.cn === 'edge.example.test'),
      [
        {
          cn: 'edge.example.test',
          not_after: new Date(certificate.notAfter * 1000).toISOString(),
          days_left: 2,
          threshold: 3,
          source: 'metrics',
        },
      ],
    );
    t.is((await gauge(app)).get('edge.example.test'), certificate.notAfter);
  },
);

test('close() aborts a read of Traefik metrics that hangs: shutdown does not wait for the read timeout', async (t) => {
  let received = 0;
  let closed = 0;
  const hanging = http.createServer((request) => {
    received += 1;
    request.socket.on('close', () => (closed += 1));
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    hanging.closeAllConnections();
    hanging.close();
  });
  const warnings: object[] = [];
  const check = new CertificateCheck({
    metricsUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/metrics`,
    acmePath: '',
    intervalMs: 3_600_000,
    // longer than the suite's timeout: close() resolving at all proves the read was aborted
    readTimeoutMs: 24 * 3_600_000,
    store: {
      readRaw: async () => undefined,
      writeRaw: async () => t.fail('nothing to record'),
    },
    now: () => new Date(),
    announces: () => true,
    publish: () => t.fail('nothing to announce'),
    log: { warn: (obj) => warnings.push(obj), info: () => undefined },
  });
  await check.start();
  await waitFor(() => received === 1, 100);
  await check.close();
  await waitFor(() => closed === 1, 100);
  t.deepEqual(check.list(), []);
  t.deepEqual(warnings, [], 'an abort at close is not a source failure');
});
