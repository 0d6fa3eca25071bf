/**
 * Live status (API.md §4.19): `app.liveStatus` (the checker of every `traefik`-type data source) and
 * GET /api/proxy-config/diagnosis. Registered by the proxy-config group, whose generations it follows.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../../../model/schemas.ts';
import { StaticConfigReader } from '../../../model/static-config.ts';
import { staticConfigPath } from '../../middlewares/index.ts';
import type { Diagnosis, FindingRegistry, ResourceLive } from '../../../model/live/types.ts';
import { LiveChecker } from './checker.ts';
import { DiagnosisQuery, DiagnosisSchema } from './schemas.ts';

/**
 * What other groups use: the resources group answers Resource `live` and filters on it; groups
 * registered before this one (history) contribute findings at onReady through `contribute`
 * (FindingRegistry, declared in model/live/types.ts so they need not import this group).
 */
export interface LiveStatus extends FindingRegistry {
  resource(id: string): ResourceLive;
  diagnosis(): Diagnosis;
  /** Checks every instance now; resolves when done. */
  checkAll(): Promise<void>;
  /** checks run, and how many of them compared (the others reused the previous results) */
  readonly stats: { checks: number; compared: number };
}

declare module 'fastify' {
  interface FastifyInstance {
    liveStatus: LiveStatus;
  }
}

async function liveStatus(app: FastifyInstance): Promise<void> {
  const { settle_s, interval_s } = app.config.live;
  // which plugins Traefik downloads at start: plugins_disabled names those to vendor (§4.20)
  const staticConfig = new StaticConfigReader(() => staticConfigPath(app));
  const checker = new LiveChecker({
    settleMs: settle_s * 1000,
    intervalMs: interval_s * 1000,
    now: () => app.now(),
    sources: () => app.datasources.traefikSources(),
    // mode none: discovered resources are not emitted and no Traefik runs them; they stay unknown
    resources: () =>
      app.datasources.mode() === 'none'
        ? app.resources.list().filter((r) => r.source === 'local')
        : app.resources.list(),
    // mode none emits `<id>` routers only, like Traefik mode: the checker names them the same way
    mode: () => (app.datasources.mode() === 'pangolin' ? 'pangolin' : 'traefik'),
    versionSet: app.config.proxy.traefik_version !== '',
    versionSetting: app.config.proxy.traefik_version,
    declaredPlugins: () => {
      const { entries } = staticConfig.declaredPlugins();
      if (!entries) return null;
      const keys = (local: boolean) => entries.filter((entry) => entry.local === local).map((entry) => entry.key);
      return { remote: keys(false), local: keys(true) };
    },
    publish: (type, data) => app.events.publish(type, data),
    log: app.log.child({ component: 'live-check' }),
  });
  app.decorate('liveStatus', {
    resource: (id) => checker.resource(id),
    diagnosis: () => checker.diagnosis(),
    checkAll: () => checker.checkAll(),
    contribute: (name, findings) => checker.contribute(name, findings),
    stats: checker.stats,
  } satisfies LiveStatus);

  const current = app.proxyConfig.current();
  if (current) checker.generated(current);
  const unsubscribe = [
    app.proxyConfig.onGenerated((generation) => checker.generated(generation)),
    app.resources.onChange(() => checker.resourcesChanged()),
  ];
  app.addHook('onReady', async () => checker.start());
  app.addHook('onClose', async () => {
    for (const off of unsubscribe) off();
    await checker.close();
  });

  await app.register(async (routes) => diagnosisRoute(routes, checker));
}

/** GET /api/proxy-config/diagnosis, in its own scope. */
function diagnosisRoute(routes: FastifyInstance, checker: LiveChecker): void {
  const scope = routes.withTypeProvider<TypeBoxTypeProvider>();
  scope.get(
    '/api/proxy-config/diagnosis',
    {
      config: { auth: 'config' },
      schema: {
        tags: ['proxy-config'],
        summary: 'What each Traefik instance runs, and the findings that explain a gap (§4.19)',
        querystring: DiagnosisQuery,
        response: { 200: DiagnosisSchema, 400: ErrorBody },
      },
    },
    async (request) => {
      if (request.query.refresh) await checker.checkAll();
      return checker.diagnosis();
    },
  );
}

export default fp(liveStatus, {
  name: 'proxy-config-live',
  decorators: { fastify: ['proxyConfig', 'datasources', 'resources', 'events', 'config', 'now'] },
});
