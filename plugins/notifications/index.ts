/**
 * The notifications group (API.md §4.21): channels in `data/notifications/<id>.yaml` (0600),
 * delivery with retries, quiet hours, digests and a per-minute cap, a history, and the event
 * sources that raise notifications. Decorates `app.notifications` (counts for the metrics group).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ifMatchOf, ifNoneMatchHits, matchingVersion, paginate, quoteEtag } from '../../model/http.ts';
import { APP_VERSION } from '../../core/version.ts';
import { ChannelService, checkChannel, withDefaults, type ChannelFileData } from './channels.ts';
import { CrowdSecDigest } from './crowdsec-digest.ts';
import { Delivery, type Channel, type Notification } from './delivery.ts';
import { notificationErrors } from './errors.ts';
import { historySince } from './history.ts';
import { ChannelFile, schemas, type ChannelData, type ChannelView } from './schemas.ts';
import { scrub, secretsOf } from './secrets.ts';
import { senderFor, type OutgoingMessage } from './senders/index.ts';
import { watchEvents, watchSystem } from './sources.ts';
import { StateFile } from './state-file.ts';

/** What other groups use: delivery counters (metrics), and raising a notification directly. */
export interface NotificationsApi {
  /** Sent, failed and suppressed messages per channel name since the process started. */
  counts(): Array<{ channel: string; status: string; count: number }>;
  /** Raises a notification (fanned out to the channels that take it); never throws, never waits. */
  notify(notification: Notification): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    notifications: NotificationsApi;
  }
}

export type { Notification } from './delivery.ts';

async function notifications(app: FastifyInstance): Promise<void> {
  const settings = app.config.notifications;
  const log = app.log.child({ component: 'notifications' });
  const collection = await app.store.collection<ChannelData>({
    name: 'notifications',
    schema: ChannelFile,
    check: (_id, data) => checkChannel(withDefaults(data as ChannelFileData)),
    fileMode: 0o600,
  });
  const channels = new ChannelService(collection);

  /** One attempt through a channel; the error that comes out names no secret of it. */
  const send = async (channel: Channel, message: OutgoingMessage, signal: AbortSignal) => {
    try {
      await senderFor(channel.type, channel.config, settings.send_timeout_ms)(message, signal);
    } catch (err) {
      // no `cause`: the original error may quote a secret (a webhook URL, a bot token), this one never does
      // eslint-disable-next-line preserve-caught-error
      throw new Error(scrub(err instanceof Error ? err.message : String(err), secretsOf(channel.type, channel.config)));
    }
  };
  // events become notifications on the leader only: every node sees them, one should tell
  // (a function declaration: the state file's error callback, built with `delivery`, raises one too)
  function notify(notification: Notification): void {
    if (app.cluster.isLeader()) delivery.notify(notification);
  }
  const delivery: Delivery = new Delivery({
    now: () => app.now(),
    channels: () => channels.channels(),
    channel: (id) => channels.channel(id),
    send,
    // a failing write means the data dir is not writable (API.md §4.21 system, error): told once, and its end
    state: (snapshot) =>
      new StateFile(
        app.store,
        snapshot,
        (err) => {
          log.error({ err }, 'notifications: saving the queue failed');
          notify({
            category: 'system',
            severity: 'error',
            title: 'The data dir is not writable',
            body: `Saving the notification queue failed: ${(err as Error).message}. Queued messages would not survive a restart, and other writes fail too.`,
          });
        },
        () =>
          notify({
            category: 'system',
            severity: 'info',
            title: 'The data dir is writable again',
            body: 'The notification queue is saved again.',
          }),
      ),
    log,
    tickMs: settings.tick_ms,
  });
  await delivery.open();

  const sources = watchEvents({
    listen: (listener) => app.events.listen(listener),
    notify,
    upstreamDownAfterMs: settings.upstream_down_after_s * 1000,
    nowMs: () => app.now().getTime(),
  });
  delivery.onTick.add((nowMs) => sources.tick(nowMs));
  const stopSystem = watchSystem({
    onLeadership: (listener) => app.cluster.onLeadership(listener),
    onLockLost: (listener) => app.dataDirLock.onLost(listener),
    nodeName: app.cluster.nodeName,
    notify,
  });
  const { crowdsec } = app.config;
  if (crowdsec.bouncer_key !== '') {
    const digest = new CrowdSecDigest({
      url: crowdsec.url,
      bouncerKey: crowdsec.bouncer_key,
      timeoutMs: crowdsec.timeout_ms,
      periodMs: settings.crowdsec_digest_s * 1000,
      userAgent: `stack-manager/${APP_VERSION}`,
      notify,
      log,
    });
    delivery.onTick.add((nowMs) => digest.tick(nowMs));
  }

  app.decorate('notifications', {
    counts: () => {
      const names = new Map(channels.channels().map((channel) => [channel.id, channel.name]));
      return delivery.counts().map((row) => ({ ...row, channel: names.get(row.channel) ?? row.channel }));
    },
    notify,
  } satisfies NotificationsApi);

  app.addHook('onReady', async () => delivery.start());
  // a hot reload's new instance has loaded the queue and delivers it; this one stops at once. A
  // message under way here when that happened may be sent again by the new instance (at least once)
  app.lifecycle.retiring.add(() => delivery.pause(app.lifecycle.restarting));
  app.addHook('onClose', async () => {
    sources.stop();
    stopSystem();
    await delivery.close();
  });

  const test = async (id: string) => {
    const channel = channels.channel(id);
    if (!channel) throw notificationErrors.notFound(id);
    const now = app.now();
    const message: OutgoingMessage = {
      id: `test-${now.getTime().toString(36)}`,
      category: 'system',
      severity: 'info',
      title: `Test message from Stack Manager (${channel.name})`,
      body: `This is a test of the notification channel "${channel.name}" (${channel.type}), sent at ${now.toISOString()}.`,
      at: now.toISOString(),
    };
    const started = performance.now();
    try {
      await send(channel, message, new AbortController().signal);
      return { delivered: true, latency_ms: Math.round(performance.now() - started), error: null };
    } catch (err) {
      return { delivered: false, latency_ms: Math.round(performance.now() - started), error: (err as Error).message };
    }
  };

  await app.register(routes, { channels, delivery, test });
}

interface RouteOptions {
  channels: ChannelService;
  delivery: Delivery;
  test: (id: string) => Promise<{ delivered: boolean; latency_ms: number; error: string | null }>;
}

/** The HTTP routes (class O; writes need the operator role), encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { channels, delivery, test }: RouteOptions): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'operations' as const };
  const sendOne = (reply: FastifyReply, view: ChannelView, status = 200) =>
    reply.code(status).header('etag', quoteEtag(view.etag)).send(view);

  scope.get('/api/notifications/channels', { config, schema: schemas.list }, async (request, reply) =>
    paginate(request, reply, channels.list(), request.query),
  );

  scope.post('/api/notifications/channels', { config, schema: schemas.create }, async (request, reply) => {
    const view = await channels.create(request.body);
    reply.header('location', `/api/notifications/channels/${view.id}`);
    return sendOne(reply, view, 201);
  });

  scope.get('/api/notifications/channels/:id', { config, schema: schemas.get }, async (request, reply) => {
    const view = channels.get(request.params.id);
    if (ifNoneMatchHits(request.headers['if-none-match'], view.etag))
      return reply.header('etag', quoteEtag(view.etag)).code(304).send();
    return sendOne(reply, view);
  });

  scope.put('/api/notifications/channels/:id', { config, schema: schemas.put }, async (request, reply) => {
    const view = await channels.put(request.params.id, request.body, matchingVersion(ifMatchOf(request)));
    return sendOne(reply, view);
  });

  scope.delete('/api/notifications/channels/:id', { config, schema: schemas.remove }, async (request, reply) => {
    await channels.remove(request.params.id, matchingVersion(ifMatchOf(request)));
    delivery.tick();
    return reply.code(204).send();
  });

  scope.post('/api/notifications/channels/:id/test', { config, schema: schemas.test }, async (request) =>
    test(request.params.id),
  );

  scope.get('/api/notifications/history', { config, schema: schemas.history }, async (request, reply) => {
    const { channel, status, since } = request.query;
    const from = since === undefined ? null : historySince(since, parent.now().getTime());
    const entries = delivery
      .history()
      .filter(
        (record) =>
          (channel === undefined || record.channel === channel) &&
          (status === undefined || record.status === status) &&
          (from === null || Date.parse(record.at) >= from),
      )
      .map(({ id, channel: ch, category, severity, title, at, status: st, attempts, last_error }) => ({
        id,
        channel: ch,
        category,
        severity,
        title,
        at,
        status: st,
        attempts,
        last_error,
      }));
    return paginate(request, reply, entries, request.query);
  });
}

export default fp(notifications, {
  name: 'notifications',
  dependencies: ['events'],
  decorators: { fastify: ['config', 'store', 'now', 'events', 'cluster', 'lifecycle', 'dataDirLock'] },
});
