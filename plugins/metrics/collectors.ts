/**
 * The stack's series (API.md §4.22) read from what other groups expose, at scrape time, plus the
 * counters kept here from their change listeners (store writes, finished jobs, generation runs).
 * Every label value comes from a bounded set: data source and target ids, route patterns, store
 * collections, job kinds, live states, finding kinds, certificate CNs.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { LIVE_STATES_WORST_FIRST } from '../../model/live/types.ts';
import { FlatHistogram, register, scraped, type Sample } from './series.ts';

/** Generation durations, seconds: a middleware edit with warm caches (~5 ms) to a cold 10,000-resource build. */
export const GENERATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What `app.notifications` (the notifications group, when loaded) reports. */
interface NotificationCounts {
  counts(): Array<{ channel: string; status: string; count: number }>;
}

/** `key` → count, for label sets of two values joined by a separator no value holds */
class PairCounts {
  private readonly counts = new Map<string, number>();
  add(first: string, second: string): void {
    const key = `${first}\u0000${second}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  samples(names: [string, string]): Sample[] {
    return [...this.counts].map(([key, value]) => {
      const at = key.indexOf('\u0000');
      return { labels: { [names[0]]: key.slice(0, at), [names[1]]: key.slice(at + 1) }, value };
    });
  }
}

/** Registers the stack's series on `registry`; returns what must be stopped on close. */
export function registerStackSeries(
  app: FastifyInstance,
  registry: Registry,
  certificates: () => Sample[],
): () => void {
  const storeWrites = new PairCounts();
  const jobsDone = new PairCounts();
  const generations = new FlatHistogram(GENERATION_BUCKETS);
  let generationRuns = 0;
  const unfinished = new Set<string>();

  const unsubscribe = [
    app.store.onAnyChange((event) => {
      if (!event.action || event.source === 'startup') return;
      // a document (settings.yaml, …) is named without its extension, as the `object` event names it
      const collection = event.id === undefined ? event.collection.replace(/\.ya?ml$/, '') : event.collection;
      storeWrites.add(collection, event.source);
    }),
    app.jobs.onChange((job) => {
      if (job.status === 'queued' || job.status === 'running') unfinished.add(job.id);
      else if (unfinished.delete(job.id)) jobsDone.add(job.kind, job.status);
    }),
    app.proxyConfig.onRun((seconds) => {
      generationRuns += 1;
      generations.observe(seconds);
    }),
  ];

  const series = [
    scraped(
      'stackmanager_provider_polls_total',
      'Provider polls answered, per document (target), remote address (instance) and status (200, 304)',
      'counter',
      () =>
        app.providerStats
          .polls()
          .map(({ target, instance, status, count }) => ({ labels: { target, instance, status }, value: count })),
    ),
    scraped(
      'stackmanager_provider_generations_total',
      'Provider document generations run (changed bytes or not)',
      'counter',
      () => [{ labels: {}, value: generationRuns }],
    ),
    scraped(
      'stackmanager_provider_generation_duration_seconds',
      'Time to generate, serialise and hash the default provider document',
      'histogram',
      () => generations.samples('stackmanager_provider_generation_duration_seconds'),
    ),
    scraped(
      'stackmanager_provider_document_bytes',
      'Size of the JSON document served per provider target',
      'gauge',
      () => app.providerStats.documentBytes().map(({ target, bytes }) => ({ labels: { target }, value: bytes })),
    ),
    scraped(
      'stackmanager_upstream_syncs_total',
      'Upstream (data source) syncs per source and result (ok, failed)',
      'counter',
      () =>
        [...app.upstream.totals()].flatMap(([source, totals]) => [
          { labels: { source, result: 'ok' }, value: totals.ok },
          { labels: { source, result: 'failed' }, value: totals.failed },
        ]),
    ),
    scraped(
      'stackmanager_upstream_last_success_timestamp_seconds',
      'When each data source last synced successfully (unix seconds)',
      'gauge',
      () =>
        [...app.upstream.totals()].flatMap(([source, totals]) =>
          totals.lastOkAt ? [{ labels: { source }, value: Date.parse(totals.lastOkAt) / 1000 }] : [],
        ),
    ),
    scraped('stackmanager_resources', 'Resources per live state (what Traefik runs, §4.19)', 'gauge', () => {
      const counts = new Map(LIVE_STATES_WORST_FIRST.map((state) => [state, 0]));
      for (const record of app.resources.list()) {
        const state = app.liveStatus.resource(record.id).state;
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      return [...counts].map(([state, value]) => ({ labels: { state }, value }));
    }),
    scraped('stackmanager_findings', 'Open diagnosis findings per kind and severity (§4.19)', 'gauge', () => {
      const counts = new PairCounts();
      for (const finding of app.liveStatus.diagnosis().findings) counts.add(finding.kind, finding.severity);
      return counts.samples(['kind', 'severity']);
    }),
    scraped(
      'stackmanager_store_writes_total',
      'Objects and documents written, per collection and source (api, file, discovery, restore, cluster)',
      'counter',
      () => storeWrites.samples(['collection', 'source']),
    ),
    scraped(
      'stackmanager_invalid_files',
      'Data files that failed validation (their last valid version stays in effect)',
      'gauge',
      () => [{ labels: {}, value: app.store.invalidFiles().length }],
    ),
    scraped(
      'stackmanager_backup_last_success_timestamp_seconds',
      'When the newest backup archive was created (unix seconds)',
      'gauge',
      async () => {
        const backups = await app.backups.list().catch(() => []);
        const newest = backups.reduce((max, backup) => Math.max(max, Date.parse(backup.created_at) || 0), 0);
        return newest > 0 ? [{ labels: {}, value: newest / 1000 }] : [];
      },
    ),
    scraped('stackmanager_jobs_total', 'Jobs finished, per kind and final status', 'counter', () =>
      jobsDone.samples(['kind', 'status']),
    ),
    scraped('stackmanager_notifications_total', 'Notifications per channel and delivery status', 'counter', () => {
      const notifications = (app as unknown as { notifications?: Partial<NotificationCounts> }).notifications;
      if (typeof notifications?.counts !== 'function') return [];
      return notifications
        .counts()
        .map(({ channel, status, count }) => ({ labels: { channel, status }, value: count }));
    }),
    scraped(
      'stackmanager_certificate_not_after_timestamp_seconds',
      'Expiry of each certificate Traefik or acme.json reports, per CN (unix seconds)',
      'gauge',
      certificates,
    ),
    scraped(
      'stackmanager_cluster_is_leader',
      '1 when this node runs the singleton work (always 1 on a standalone server)',
      'gauge',
      () => [{ labels: {}, value: app.cluster.isLeader() ? 1 : 0 }],
    ),
  ];
  for (const one of series) register(registry, one);
  return () => {
    for (const off of unsubscribe) off();
  };
}
