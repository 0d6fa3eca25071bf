/**
 * The IP addresses group (API.md §4.12): public IP, CrowdSec decisions, the security view and unban
 * under /api/ip, plus the `crowdsec` deep health check (API.md §4.1).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { APP_VERSION } from '../../core/version.ts';
import { isTrue } from '../../model/schemas.ts';
import { paginate } from '../../model/http.ts';
import { ALLOWLIST_PATH, AllowlistFileSchema, checkAllowlistFile, type AllowlistFile } from './allowlist-file.ts';
import { AllowlistService } from './allowlist-service.ts';
import { CrowdSecClient } from './crowdsec-client.ts';
import {
  createAllowlistSchema,
  createDecisionSchema,
  deleteAllowlistSchema,
  deleteDecisionSchema,
  listAllowlistSchema,
  listDecisionsSchema,
} from './decision-schemas.ts';
import { DEFAULT_DECISION_DURATION, DecisionService } from './decisions-service.ts';
import { effectiveWithinS } from './effective.ts';
import { PublicIpFinder } from './public-ip.ts';
import { blockedSchema, publicSchema, securitySchema, unbanSchema } from './schemas.ts';
import { IpService } from './service.ts';

/** Deep health checks give each probe 3 s (API.md §4.1); ours stops its request then too. */
const HEALTH_PROBE_MS = 3000;

async function ip(app: FastifyInstance): Promise<void> {
  const { crowdsec: settings } = app.config;
  const userAgent = `stack-manager/${APP_VERSION}`;
  const closing = new AbortController();
  const crowdsec = new CrowdSecClient({
    url: settings.url,
    bouncerKey: settings.bouncer_key,
    machineId: settings.machine_id,
    machinePassword: settings.machine_password,
    timeoutMs: settings.timeout_ms,
    userAgent,
    now: () => app.now(),
  });
  const publicIp = new PublicIpFinder({
    providers: app.config.ip.public_providers,
    userAgent,
    now: () => app.now(),
    signal: closing.signal,
  });
  const effective = () => effectiveWithinS(app.middlewares.records(), (id) => app.middlewares.usedBy(id));
  const service = new IpService({
    crowdsec,
    publicIp,
    middlewares: () => app.middlewares.records(),
    alertsLimit: settings.alerts_limit,
    effectiveWithinS: effective,
    now: () => app.now(),
  });
  const log = app.log.child({ component: 'crowdsec' });
  const allowlist = new AllowlistService({
    document: await app.store.document<AllowlistFile>({
      path: ALLOWLIST_PATH,
      schema: AllowlistFileSchema,
      initial: () => ({ entries: [] }),
      check: checkAllowlistFile,
    }),
    crowdsec,
    effectiveWithinS: effective,
    now: () => app.now(),
    log,
  });
  const decisions = new DecisionService({
    crowdsec,
    allowlistedBy: (target) => allowlist.overlapping(target),
    effectiveWithinS: effective,
    now: () => app.now(),
  });
  // the sweep: expired entries leave the file, decisions the allowlist covers are removed
  app.addHook('onReady', async () => allowlist.start(settings.allowlist_sweep_s * 1000));

  // "configured" = what the read endpoints need; crowdsec.url alone has a default and proves nothing
  app.health.register('crowdsec', async () => {
    if (!crowdsec.hasBouncer()) return 'skipped';
    await crowdsec.health(AbortSignal.timeout(HEALTH_PROBE_MS));
  });
  app.addHook('onClose', async () => {
    allowlist.stop();
    closing.abort();
  });
  // manual bans and unbans (API.md §4.21 security): who did what, never a credential
  const published: Published = (request, data) =>
    app.events.publish('decision', { ...data, by: request.principal?.name ?? 'anonymous' });
  await app.register(routes, { service, published });
  await app.register(decisionRoutes, { decisions, allowlist, published });
}

/** Publishes one `decision` event for a request: `{action, value, type, duration}` plus `by` (the token name). */
type Published = (
  request: FastifyRequest,
  data: { action: 'added' | 'deleted' | 'unbanned'; value: string; type: string | null; duration: string | null },
) => void;

/** Decisions and the allowlist (API.md §4.23), in their own scope. */
async function decisionRoutes(
  parent: FastifyInstance,
  {
    decisions,
    allowlist,
    published,
  }: { decisions: DecisionService; allowlist: AllowlistService; published: Published },
): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'operations' as const };
  const effectiveHeader = (reply: FastifyReply, seconds: number | null) =>
    seconds === null ? reply : reply.header('x-effective-within', String(seconds));

  scope.get('/api/ip/decisions', { config, schema: listDecisionsSchema }, async (request, reply) => {
    const { page, page_size, ...filter } = request.query;
    return paginate(request, reply, await decisions.list(filter), { page, page_size });
  });

  scope.post('/api/ip/decisions', { config, schema: createDecisionSchema }, async (request, reply) => {
    const result = await decisions.add(request.body);
    request.log.info({ value: request.body.value, ids: result.decisions.map((d) => d.id) }, 'CrowdSec decision added');
    const [first] = result.decisions;
    published(request, {
      action: 'added',
      value: first?.value ?? request.body.value,
      type: first?.type ?? request.body.type ?? 'ban',
      duration: request.body.duration ?? DEFAULT_DECISION_DURATION,
    });
    const query = new URLSearchParams({ value: result.decisions[0]?.value ?? request.body.value });
    return effectiveHeader(reply, result.effective_within_s)
      .code(201)
      .header('location', `/api/ip/decisions?${query.toString()}`)
      .send(result);
  });

  scope.delete('/api/ip/decisions/:id', { config, schema: deleteDecisionSchema }, async (request, reply) => {
    const id = Number(request.params.id);
    const { removed, effectiveWithinS } = await decisions.delete(id);
    request.log.info({ id }, 'CrowdSec decision deleted');
    published(request, { action: 'deleted', value: removed.value, type: removed.type, duration: removed.duration });
    return effectiveHeader(reply, effectiveWithinS).code(204).send();
  });

  scope.get('/api/ip/allowlist', { config, schema: listAllowlistSchema }, async (request, reply) =>
    paginate(request, reply, allowlist.entries(), {}),
  );

  scope.post('/api/ip/allowlist', { config, schema: createAllowlistSchema }, async (request, reply) => {
    const entry = await allowlist.create(request.body, request.principal?.name ?? 'anonymous');
    return effectiveHeader(reply, entry.effective_within_s)
      .code(201)
      .header('location', `/api/ip/allowlist/${entry.id}`)
      .send(entry);
  });

  scope.delete('/api/ip/allowlist/:id', { config, schema: deleteAllowlistSchema }, async (request, reply) => {
    await allowlist.delete(request.params.id);
    return reply.code(204).send();
  });
}

/** The HTTP routes, in their own scope. */
async function routes(
  parent: FastifyInstance,
  { service, published }: { service: IpService; published: Published },
): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'operations' as const };

  scope.get('/api/ip/public', { config, schema: publicSchema }, async (request) => {
    const { refresh } = request.query;
    return service.publicIp(isTrue(refresh), request.ip);
  });

  scope.get('/api/ip/blocked/:ip', { config, schema: blockedSchema }, async (request) => {
    const { ip } = request.params;
    return service.blocked(service.checkIp(ip, '/params/ip'));
  });

  scope.get('/api/ip/security/:ip', { config, schema: securitySchema }, async (request) => {
    const { ip } = request.params;
    return service.security(service.checkIp(ip, '/params/ip'));
  });

  scope.post('/api/ip/unban', { config, schema: unbanSchema }, async (request) => {
    const { ip } = request.body;
    const result = await service.unban(service.checkIp(ip, '/ip'));
    request.log.info(
      { ip, deleted: result.deleted, still_blocked: result.still_blocked },
      'CrowdSec decisions deleted',
    );
    if (result.deleted > 0) published(request, { action: 'unbanned', value: ip, type: null, duration: null });
    return result;
  });
}

export default fp(ip, {
  name: 'ip',
  dependencies: ['health', 'middlewares', 'events'],
  decorators: { fastify: ['config', 'now', 'health', 'middlewares', 'store', 'events'] },
});
