/**
 * The IP addresses group (API.md §4.12): public IP, CrowdSec decisions, the security view and unban
 * under /api/ip, plus the `crowdsec` deep health check (API.md §4.1).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { APP_VERSION } from '../../core/version.ts';
import { isTrue } from '../../model/schemas.ts';
import { CrowdSecClient } from './crowdsec-client.ts';
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
  const service = new IpService({
    crowdsec,
    publicIp,
    middlewares: () => app.middlewares.records(),
    alertsLimit: settings.alerts_limit,
    now: () => app.now(),
  });

  // "configured" = what the read endpoints need; crowdsec.url alone has a default and proves nothing
  app.health.register('crowdsec', async () => {
    if (!crowdsec.hasBouncer()) return 'skipped';
    await crowdsec.health(AbortSignal.timeout(HEALTH_PROBE_MS));
  });
  app.addHook('onClose', async () => closing.abort());
  await app.register(routes, { service });
}

/** The HTTP routes, in their own scope. */
async function routes(parent: FastifyInstance, { service }: { service: IpService }): Promise<void> {
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
    return result;
  });
}

export default fp(ip, {
  name: 'ip',
  dependencies: ['health', 'middlewares'],
  decorators: { fastify: ['config', 'now', 'health', 'middlewares'] },
});
