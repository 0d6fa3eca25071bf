/**
 * The resources group (API.md §4.4): the `resources` collection, the discovery poller, the
 * reference sources of the middlewares and services groups, `app.resources` / `app.resourcesView`,
 * and the /api/resources routes in their own scope.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import type { ResourceRecord } from '../../model/upstream-routers.ts';
import { fileConfigProblems } from './config-rules.ts';
import { localFileProblems } from './local.ts';
import { LocalWrites } from './local-writes.ts';
import type { EffectiveInputs } from './effective.ts';
import { mtlsUnavailableReason } from './mtls.ts';
import { DiscoveryPoller, toOutcome } from './poller.ts';
import { ResourceRepository } from './repository.ts';
import { resourceRoutes } from './routes.ts';
import { ResourceFile, type ResourceFileData, type ResourceListFilter } from './schemas.ts';
import { ResourceService } from './service.ts';
import { DiscoverySync, type SyncReport } from './sync.ts';
import { jsonSafe, type ResourceView } from './views.ts';
import { NOT_CHECKED } from '../../model/live/schemas.ts';

export type { ResourceView } from './views.ts';
export type { SyncReport } from './sync.ts';

/** What other groups (the config provider, health, plugins) use of the resources. */
export interface ResourcesApi {
  /** Every resource (discovered fields + overrides), sorted by id: the config generator's input. */
  list(): ResourceRecord[];
  get(id: string): ResourceRecord | undefined;
  /** Resources as the API shows them (computed fields included). */
  views(filter?: Omit<ResourceListFilter, 'page' | 'page_size'>): ResourceView[];
  /** Any change of any resource (sync, API write, hand edit); returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /** Runs a sync now (after a running one) and resolves with its report; what tests await. */
  syncNow(): Promise<SyncReport>;
  /** Resolves with the report of the startup sync (which starts once the app is ready). */
  started(): Promise<SyncReport>;
  /** Traefik mode: the last Traefik `/api/http/routers` list without our own routers; else null. */
  traefikRouters(): Array<Record<string, unknown>> | null;
}

/** A Resource as plugins get it: plain JSON, priorities above 2^53−1 as digit strings. */
export type ResourceJson = Omit<ResourceView, 'priority'> & { priority: number | string | null };

/** Read-only JSON-safe copies for third-party plugins (API.md §6 `core.resources`). */
export interface ResourcesView {
  list(): ResourceJson[];
  get(id: string): ResourceJson | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    resources: ResourcesApi;
    resourcesView: ResourcesView;
  }
}

async function resources(app: FastifyInstance, _options: GroupOptions): Promise<void> {
  // cluster mode: only the leader's syncs write; the other nodes take the discovered fields from its files
  const repository = new ResourceRepository({ leads: () => app.cluster.isLeader() });
  repository.attach(
    await app.store.collection<ResourceFileData>({
      name: 'resources',
      schema: ResourceFile,
      check: (_id, data) => [...fileConfigProblems(data.config), ...localFileProblems(data)],
    }),
  );
  const sources = app.datasources;
  const sync = new DiscoverySync({
    log: app.log.child({ component: 'discovery' }),
    store: app.store,
    upstream: app.upstream,
    repository,
    now: () => app.now(),
    discovery: app.config.discovery,
    // records(): ours only, without the computed fields list() builds for every discovered service
    ownServiceIds: () => app.services.records().map((s) => s.id),
  });
  const service = new ResourceService({
    repository,
    effective: effectiveInputs(app, sync),
    middlewareExists: (id) => app.middlewares.has(id),
    service: (id) => app.services.get(id),
    mtlsUnavailable: () => mtlsUnavailableReason(app),
    // the proxy-config group's checker, registered after this group (when it is loaded at all)
    live: (id) => (app.hasDecorator('liveStatus') ? app.liveStatus.resource(id) : NOT_CHECKED),
  });

  app.middlewares.addReferenceSource({
    referrers: (id) => service.middlewareReferrers(id),
    removeReferences: (id) => service.dropMiddleware(id),
  });
  app.services.addReferenceSource({
    referrers: (id) => service.serviceReferrers(id),
    removeReferences: (id) => service.dropService(id),
  });

  const poller = new DiscoveryPoller(sync, sources, app.log.child({ component: 'discovery' }), () =>
    app.cluster.isLeader(),
  );
  // a hand edit of discovered fields is not taken: the node that writes syncs now to put them back
  const stopDrift = repository.onDrift(() => void poller.request('drift'));
  app.addHook('onClose', async () => stopDrift());
  // cluster mode: a node that becomes the leader syncs at once (the old leader may have died mid-interval)
  const stopFollowing = app.cluster.onLeadership((leading) => {
    if (leading) void poller.request('interval');
  });
  app.addHook('onClose', async () => stopFollowing());
  app.upstream.setSyncHandler((reason) => poller.request(reason).then(toOutcome));
  // the cached body is in place before the first request: stale, but a config can be served
  await sync.useSource(sources.active());
  app.addHook('onReady', async () => poller.start());
  // preClose: the fetch is aborted and the running sync finishes before the store closes
  app.addHook('preClose', async () => poller.stop());

  app.decorate('resources', {
    list: () => repository.records(),
    get: (id: string) => repository.record(id),
    views: (filter = {}) => service.list(filter),
    onChange: (listener: () => void) => repository.onChange(listener),
    syncNow: () => poller.request('forced'),
    started: () => poller.started(),
    traefikRouters: () => sync.traefikRouters(),
  } satisfies ResourcesApi);
  app.decorate('resourcesView', {
    list: () => jsonSafe(service.list()) as ResourceJson[],
    get: (id: string) => jsonSafe(service.get(id)) as ResourceJson | undefined,
  } satisfies ResourcesView);

  const local = new LocalWrites({
    repository,
    resources: service,
    services: app.services,
    middlewareExists: (id) => app.middlewares.has(id),
    log: app.log.child({ component: 'resources' }),
  });
  await app.register(resourceRoutes, { service, local });
}

/** Inputs of effective.ts from the other groups (services and middlewares as their APIs show them). */
function effectiveInputs(app: FastifyInstance, sync: DiscoverySync): EffectiveInputs {
  const mode = () => {
    const chosen = app.datasources.mode();
    return app.datasources.active() || chosen === 'none' ? chosen : (app.upstream.current()?.mode ?? 'pangolin');
  };
  return {
    mode,
    upstream: () => {
      if (mode() === 'none') return null;
      if (mode() === 'traefik') return sync.traefikRouters();
      const snapshot = app.upstream.current();
      return snapshot?.mode === 'pangolin' ? snapshot.body : null;
    },
    middleware: (id) => {
      const m = app.middlewares.get(id);
      return m && { id: m.id, name: m.name, type: m.type, config: m.config };
    },
    service: (id) => {
      const s = app.services.get(id);
      return s && s.source !== 'discovered'
        ? { id: s.id, name: s.name, type: s.type, protocol: s.protocol, config: s.config, source: s.source }
        : undefined;
    },
    discovered: () => app.upstream.discoveredServices(),
    mtls: () => app.mtls.generatorState(),
  };
}

export default fp(resources, { name: 'resources', dependencies: ['datasource', 'middlewares', 'services', 'mtls'] });
