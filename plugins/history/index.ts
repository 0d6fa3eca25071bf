/**
 * The History group (API.md §4.24): a git repository in data/.history fed by every change of the
 * data dir (recorder.ts), and GET /api/history, GET /api/history/:rev, POST /api/history/:rev/restore,
 * GET /api/history/status.
 *
 * Who made an API change: each write request runs in an AsyncLocalStorage context (set in onRequest
 * and re-entered in preValidation, after the body was read on the socket's context), so a store
 * change reported while a request writes is attributed to its token; the request's audit line
 * (§2.11), built in onResponse, becomes the commit message. Cost: on Node 24 (the image) the context
 * rides on AsyncContextFrame; on Node 20 AsyncLocalStorage turns on promise hooks for the process
 * after the first write (a micro-benchmark of 2e6 awaits: 0.33-0.58 s without, 0.77-0.88 s with,
 * ≈0.2 µs per await). Registered before the groups with routes that
 * write, so its hooks apply to their routes.
 *
 * `data/.history` is a hidden entry of the data dir: the store's watcher ignores it, backups leave it
 * out and a backup restore does not touch it (history is the way back across restores: the restore
 * itself becomes a commit by `restore`).
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import path from 'node:path';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { auditEntryOf, keepCreatedBody, objectIdOf } from '../../core/audit.ts';
import { errors } from '../../core/errors/app-error.ts';
import { paginate } from '../../model/http.ts';
import { historyErrors } from './errors.ts';
import type { FindingContribution } from '../../model/live/types.ts';
import { pushFindings } from './findings.ts';
import { Git } from './git.ts';
import { Recorder, type AuditLine, type HistoryStatus } from './recorder.ts';
import { listSchema, restoreSchema, showSchema, statusSchema } from './schemas.ts';
import { HistoryService } from './service.ts';

export type { HistoryStatus } from './recorder.ts';

export const HISTORY_DIR = '.history';

declare module 'fastify' {
  interface FastifyInstance {
    /** The config history: status, and `idle()` resolving once every noted change is committed (tests, shutdown). */
    history: { status(): HistoryStatus | { enabled: false }; idle(): Promise<void>; pushed(): Promise<void> };
  }
}

interface RequestContext {
  request: FastifyRequest;
}

const RESOURCE = Symbol('history.asyncResource');
/** Audit lines are kept this long for the batch that waits for them. */
const LINE_TTL_MS = 60_000;

async function history(app: FastifyInstance): Promise<void> {
  const settings = app.config.history;
  if (!settings.enabled) {
    app.decorate('history', {
      status: () => ({ enabled: false as const }),
      idle: async () => undefined,
      pushed: async () => undefined,
    });
    await app.register(routes, { service: null, recorder: null });
    return;
  }

  const als = new AsyncLocalStorage<RequestContext>();
  const lines = new Map<string, { line: AuditLine; at: number }>();

  // only writes get a context: reads change nothing a token is credited with (a GET's last_used_at
  // stamp is the server's), and a context per request costs an AsyncResource each
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') {
      done();
      return;
    }
    als.run({ request }, () => {
      (request as unknown as Record<symbol, AsyncResource>)[RESOURCE] = new AsyncResource('history-request');
      done();
    });
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const resource = (request as unknown as Record<symbol, AsyncResource | undefined>)[RESOURCE];
    if (resource) resource.runInAsyncScope(done);
    else done();
  });
  app.addHook('onSend', keepCreatedBody);
  app.addHook('onResponse', (request, reply, done) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS') {
      const now = Date.now();
      // the created object of a 201 is named by its Location or its body, as in the audit log
      lines.set(String(request.id), { at: now, line: auditEntryOf(app, request, reply, objectIdOf(request, reply)) });
      if (lines.size > 1000)
        for (const [key, value] of lines) {
          if (now - value.at < LINE_TTL_MS) break;
          lines.delete(key);
        }
    }
    done();
  });

  const git = new Git(path.join(app.store.dataDir, HISTORY_DIR), settings.git_binary);
  let findings: FindingContribution | null = null;
  const recorder = new Recorder({
    store: app.store,
    git,
    batchMs: settings.batch_ms,
    maxCommits: settings.max_commits,
    remote: settings.remote_url
      ? { url: settings.remote_url, username: settings.remote_username, password: settings.remote_password }
      : null,
    nodeName: app.cluster.nodeName,
    log: app.log.child({ component: 'history' }),
    now: () => app.now(),
    current: () => {
      const request = als.getStore()?.request;
      if (!request) return undefined;
      return { author: request.principal?.name ?? 'anonymous', source: 'api', requestId: String(request.id) };
    },
    auditLine: (requestId) => lines.get(requestId)?.line,
    onPushResult: () => findings?.changed(),
  });
  recorder.start();
  app.addHook('onReady', async () => {
    // push failures as a §4.19 finding: the live status is registered after this group, so it is
    // looked up once every plugin is in (an app without the proxy-config group has no diagnosis)
    if (settings.remote_url && app.hasDecorator('liveStatus'))
      findings = app.liveStatus.contribute('history', () => pushFindings(recorder.status()));
    await recorder.openRepository();
  });
  app.decorate('history', {
    status: () => recorder.status(),
    idle: () => recorder.idle(),
    pushed: () => recorder.pushed(),
  });
  app.addHook('onClose', async () => {
    findings?.remove();
    await recorder.close();
  });
  await app.register(routes, { service: new HistoryService(git, recorder, app.store), recorder });
}

/** `since`/`until`: an ISO timestamp or `<n>s|m|h|d` before now. */
function instant(value: string | undefined, now: Date): Date | undefined {
  if (value === undefined) return undefined;
  const relative = /^([0-9]+)(s|m|h|d)$/.exec(value);
  if (relative) {
    const unit = { s: 1, m: 60, h: 3600, d: 86400 }[relative[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now.getTime() - Number(relative[1]) * unit * 1000);
  }
  return new Date(value);
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(
  parent: FastifyInstance,
  { service, recorder }: { service: HistoryService | null; recorder: Recorder | null },
): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'config' as const };
  const available = (): HistoryService => {
    if (!service) throw historyErrors.unavailable('history.enabled is false');
    if (!recorder?.status().available)
      throw historyErrors.unavailable(recorder?.status().last_error?.message ?? 'the repository is being opened');
    return service;
  };

  scope.get('/api/history/status', { config, schema: statusSchema }, async () => parent.history.status());

  scope.get('/api/history', { config, schema: listSchema }, async (request, reply) => {
    const query = request.query;
    const history = available();
    const now = parent.now();
    const since = instant(query.since, now);
    const until = instant(query.until, now);
    for (const [name, date] of [
      ['since', since],
      ['until', until],
    ] as const)
      if (date && Number.isNaN(date.getTime()))
        throw errors.validation(`${name} is not a valid timestamp`, [
          { path: `/query/${name}`, message: 'must be an ISO-8601 timestamp or 30s, 15m, 2h, 7d' },
        ]);
    const revs = await history.revisions({ path: query.path?.replace(/\/$/, ''), since, until, author: query.author });
    const page = paginate(request, reply, revs, query);
    return history.entries(page);
  });

  scope.get('/api/history/:rev', { config, schema: showSchema }, async (request) =>
    available().show(request.params.rev),
  );

  scope.post('/api/history/:rev/restore', { config, schema: restoreSchema }, async (request) =>
    available().restore(request.params.rev, request.body?.paths),
  );
}

export default fp(history, {
  name: 'history',
  dependencies: ['auth'],
  decorators: { fastify: ['config', 'store', 'now', 'cluster'] },
});
