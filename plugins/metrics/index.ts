/**
 * The Metrics group (API.md §4.22): GET /metrics in Prometheus' text format — process and Node
 * metrics (prom-client's defaults) and the stackmanager_* series — and the certificate expiry check
 * (§4.21 `certs`) that fills the certificate gauge and publishes `certificate` events.
 *
 * Collecting is cheap: one onResponse hook counts requests (http-requests.ts), change listeners count
 * writes, jobs and generations, and everything else is read from the other groups when scraped.
 * Class O, or P with `metrics.public: true` (a scraper on a private network, without a token).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { CertificateCheck, type CertificateReport, type CertificateView } from './cert-check.ts';
import { errors } from '../../core/errors/app-error.ts';
import { registerStackSeries } from './collectors.ts';
import { HttpRequestCounts } from './http-requests.ts';
import { processMetrics } from './process-metrics.ts';
import { certificatesSchema, metricsSchema, PROMETHEUS_CONTENT_TYPE } from './schemas.ts';
import { register, scraped } from './series.ts';

export type { CertificateEvent, CertificateReport, CertificateView } from './cert-check.ts';

/** The certificates the expiry check knows (for a Certificates view and the tests). */
export interface Certificates {
  /** Every certificate of the last check, soonest expiry first. */
  list(): CertificateView[];
  /** Checks now (or joins the check running) and resolves when done; never rejects. */
  check(): Promise<void>;
  /** The last check's time, per-source outcome and certificates (GET /api/certificates). */
  report(): CertificateReport;
}

declare module 'fastify' {
  interface FastifyInstance {
    certificates: Certificates;
  }
}

async function metrics(app: FastifyInstance): Promise<void> {
  const registry = new Registry();
  const processRegistry = processMetrics();

  const requests = new HttpRequestCounts();
  app.addHook('onResponse', (request, reply, done) => {
    requests.record(request.routeOptions.url, request.method, reply.statusCode, reply.elapsedTime);
    done();
  });
  register(
    registry,
    scraped(
      'stackmanager_http_requests_total',
      'HTTP requests answered, per route pattern, method and status',
      'counter',
      () => requests.samples(),
    ),
  );
  register(
    registry,
    scraped('stackmanager_http_request_duration_seconds', 'HTTP request durations (Fastify routes)', 'histogram', () =>
      requests.durations.samples('stackmanager_http_request_duration_seconds'),
    ),
  );

  const certificates = new CertificateCheck({
    metricsUrl: app.config.proxy.metrics_url,
    acmePath: app.config.proxy.acme_path,
    intervalMs: app.config.certs.check_interval_s * 1000,
    store: app.store,
    now: () => app.now(),
    announces: () => app.cluster.isLeader(),
    publish: (event) => app.events.publish('certificate', event),
    log: app.log.child({ component: 'certs' }),
  });
  app.decorate('certificates', {
    list: () => certificates.list(),
    check: () => certificates.check(),
    report: () => certificates.report(),
  } satisfies Certificates);
  const stopSeries = registerStackSeries(app, registry, () => certificates.samples());
  app.addHook('onReady', async () => certificates.start());
  app.addHook('onClose', async () => {
    stopSeries();
    await certificates.close();
  });

  await app.register(async (parent) => {
    const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
    scope.get(
      '/metrics',
      {
        // Prometheus sends `Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4`:
        // not an API version (§2.2)
        config: { auth: app.config.metrics.public ? 'public' : 'operations', versioned: false },
        schema: metricsSchema,
      },
      async (_request, reply) => {
        // both end with a newline: the families follow one another
        const text = (await processRegistry.metrics()) + (await registry.metrics());
        return reply.type(PROMETHEUS_CONTENT_TYPE).send(text);
      },
    );
    scope.get('/api/certificates', { config: { auth: 'operations' }, schema: certificatesSchema }, async (request) => {
      if (!certificates.enabled)
        throw errors.notConfigured(
          'no certificate source is set; set proxy.metrics_url (PROXY_METRICS_URL) or proxy.acme_path (PROXY_ACME_PATH)',
        );
      // a refresh joins a check in flight; the check is bounded by the metrics read timeout (10 s)
      if (request.query.refresh === true) await certificates.check();
      return certificates.report();
    });
  });
}

export default fp(metrics, {
  name: 'metrics',
  dependencies: ['auth', 'events', 'proxy-config', 'proxy-config-live', 'datasource', 'resources', 'jobs', 'backup'],
  decorators: { fastify: ['config', 'store', 'cluster', 'now', 'events', 'jobs', 'backups', 'upstream'] },
});
