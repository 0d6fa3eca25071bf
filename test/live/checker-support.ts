/**
 * Shared setup of the live checker tests (API.md §4.19): a real app whose resources come from the
 * Pangolin fake (test/helpers/fake-upstream.ts) and whose `traefik` data source is a fake Traefik API
 * (test/helpers/fake-traefik-api.ts) loaded with the document the app serves.
 */
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startFakeTraefikApi, type FakeTraefikApi } from '../helpers/fake-traefik-api.ts';
import { waitFor } from '../helpers/wait.ts';
import { listen, stream } from '../events/support.ts';
import type { SseClient } from '../events/sse-client.ts';
import type { Diagnosis, ResourceLive } from '../../model/live/types.ts';

/** Resource ids of the Pangolin fixture and their routers in Traefik. */
export const NEXTCLOUD = { id: '1-nextcloud-router', router: '1-Nextcloud-router@http' };
export const GRAFANA = { id: '2-grafana-router', router: '2-Grafana-router@http' };

export interface LiveHarness {
  app: FastifyInstance;
  traefik: FakeTraefikApi;
  pangolin: FakeUpstream;
  /** loads the fake Traefik with the document the app serves now */
  follow(): void;
  live(id: string): Promise<ResourceLive>;
  diagnosis(query?: string): Promise<Diagnosis>;
  /** waits until a check after this call has finished and `probe` holds */
  until<T>(probe: () => T | Promise<T>): Promise<NonNullable<T>>;
  /** an open /api/events stream (the app listens on 127.0.0.1) */
  events(): Promise<SseClient>;
}

export interface HarnessOptions {
  settle_s?: number;
  interval_s?: number;
  timeout_ms?: number;
  /** the app's clock (a manual one moves the settle window without waiting) */
  now?: () => Date;
}

export async function liveHarness(t: ExecutionContext<any>, options: HarnessOptions = {}): Promise<LiveHarness> {
  const pangolin = await startFakeUpstream();
  t.teardown(() => pangolin.close());
  const traefik = await startFakeTraefikApi();
  t.teardown(() => traefik.close());
  const app = await build(t, {
    now: options.now,
    config: {
      auth: { mode: 'off' },
      datasources: { pangolin_url: pangolin.pangolinUrl, traefik_url: traefik.url },
      live: { settle_s: options.settle_s ?? 0, interval_s: options.interval_s ?? 1 },
    },
  });
  // the fakes run in this process: a loaded CI machine may take seconds to answer
  const relaxed = await app.inject({
    method: 'PUT',
    url: '/api/datasource/traefik',
    payload: { timeout_ms: options.timeout_ms ?? 60_000 },
  });
  if (relaxed.statusCode !== 200) throw new Error(relaxed.body);
  await waitFor(() => app.proxyConfig.current()?.result.resources[NEXTCLOUD.id], 5000);
  const harness: LiveHarness = {
    app,
    traefik,
    pangolin,
    follow: () => traefik.load(app.proxyConfig.current()!.served as Record<string, any>),
    live: async (id) => {
      const response = await app.inject({ url: `/api/resources/${id}` });
      if (response.statusCode !== 200) throw new Error(response.body);
      return response.json().live;
    },
    diagnosis: async (query = '') => {
      const response = await app.inject({ url: `/api/proxy-config/diagnosis${query}` });
      if (response.statusCode !== 200) throw new Error(response.body);
      return response.json();
    },
    until: async (probe) => {
      const after = app.liveStatus.stats.checks;
      return waitFor(async () => (app.liveStatus.stats.checks > after ? probe() : null), 5000, 20);
    },
    events: async () => stream(t, `${await listen(app)}/api/events?types=live,diagnosis`),
  };
  return harness;
}

/** A new generation of the default document: Grafana's priority override set to 500 through the API. */
export async function newGeneration(t: ExecutionContext<any>, h: LiveHarness): Promise<void> {
  const before = h.app.proxyConfig.current()!.json.etag;
  const put = await h.app.inject({
    method: 'PUT',
    url: `/api/resources/${GRAFANA.id}/config/priority`,
    payload: { priority: 500 },
  });
  t.is(put.statusCode, 200, put.body);
  await waitFor(() => h.app.proxyConfig.current()!.json.etag !== before, 5000);
}
