/**
 * The backup group (API.md §4.10): archives of the data dir in BACKUP_DIR, restore with a safety
 * backup and rollback, retention, and scheduled backups (timer cleared in onClose). Routes are
 * class O (`operations`).
 */
import { createReadStream } from 'node:fs';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { GroupOptions } from '../../core/types.ts';
import { APP_VERSION } from '../../core/version.ts';
import { paginate } from '../../model/http.ts';
import type { SwapFileOps } from './restore.ts';
import { parseInterval, startSchedule, type ScheduleClock } from './schedule.ts';
import {
  cleanupSchema,
  createSchema,
  deleteSchema,
  downloadSchema,
  getSchema,
  listSchema,
  restoreSchema,
} from './schemas.ts';
import { BackupService } from './service.ts';

export type { BackupService } from './service.ts';

export interface BackupsOptions extends GroupOptions {
  /** File operations of archive writes and the restore swap (default: node:fs). */
  fileOps?: Partial<SwapFileOps>;
  /** Clock of the backup schedule (default: real timers). */
  scheduleClock?: ScheduleClock;
}

declare module 'fastify' {
  interface FastifyInstance {
    backups: BackupService;
  }
}

async function backups(app: FastifyInstance, options: BackupsOptions): Promise<void> {
  const settings = app.config.backup;
  const service = new BackupService({
    dataDir: app.store.dataDir,
    settings,
    appVersion: APP_VERSION,
    now: app.now,
    log: app.log.child({ component: 'backups' }),
    reloadStore: (replace) => app.store.reload(replace),
    regenerate: () => app.proxyConfig.regenerate(),
    fileOps: options.fileOps,
    notify: (change) => app.events.publish('backup', change),
  });
  app.decorate('backups', service);

  const interval = parseInterval(settings.schedule);
  const stopSchedule =
    interval === null
      ? null
      : startSchedule(
          interval,
          // cluster mode: one node (the leader) takes the scheduled backups and applies retention
          async () => {
            if (app.cluster.isLeader()) await service.runScheduled();
            else app.log.debug({ leader: false }, 'scheduled backup left to the cluster leader');
          },
          options.scheduleClock,
        );
  if (interval !== null) app.log.info({ schedule: settings.schedule, dir: service.backupDir }, 'scheduled backups on');
  app.addHook('onClose', async () => {
    stopSchedule?.();
    await service.close();
  });

  await app.register(routes, { service });
}

/** The HTTP routes, encapsulated so their hooks never leak. */
async function routes(parent: FastifyInstance, { service }: { service: BackupService }): Promise<void> {
  const scope = parent.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'operations' as const };

  scope.get('/api/backup/list', { config, schema: listSchema }, async (request, reply) =>
    paginate(request, reply, await service.list(), request.query),
  );

  scope.get('/api/backup/:id', { config, schema: getSchema }, async (request) => service.get(request.params.id));

  scope.get('/api/backup/:id/download', { config, schema: downloadSchema }, async (request, reply) => {
    const { id } = request.params;
    const { file, size } = await service.archive(id);
    return reply
      .type('application/gzip')
      .header('content-length', String(size))
      .header('content-disposition', `attachment; filename="${id}.tar.gz"`)
      .send(createReadStream(file));
  });

  scope.post('/api/backup/create', { config, schema: createSchema }, async (request, reply) => {
    const body = request.body;
    if (body.dry_run) return reply.code(200).send(await service.dryRun());
    const view = await service.create(body.note ?? '');
    return reply.code(201).header('location', `/api/backup/${view.id}`).send(view);
  });

  scope.post('/api/backup/restore', { config, schema: restoreSchema }, async (request) =>
    service.restore(request.body),
  );

  scope.delete('/api/backup/:id', { config, schema: deleteSchema }, async (request, reply) => {
    await service.remove(request.params.id);
    return reply.code(204).send();
  });

  scope.post('/api/backup/cleanup', { config, schema: cleanupSchema }, async () => service.cleanup());
}

export default fp(backups, { name: 'backup', dependencies: ['proxy-config', 'events'] });
