/**
 * The backup domain (API.md §4.10): list, create, delete, cleanup and restore archives in
 * BACKUP_DIR. One backup, restore or cleanup runs at a time (409 `busy`).
 */
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from '../../core/config/schema.ts';
import { BackupCatalogue } from './catalogue.ts';
import { buildBackup, planBackup, type BackupSources } from './create.ts';
import { backupErrors } from './errors.ts';
import { runRestore } from './restore-run.ts';
import { fileNameOf, nextBackupId, type BackupKind } from './naming.ts';
import { selectExpired } from './retention.ts';
import type { SwapFileOps } from './restore.ts';
import type { BackupView, RestoreBodyType, RestoreResultType } from './schemas.ts';

export interface BackupServiceOptions {
  dataDir: string;
  settings: AppConfig['backup'];
  appVersion: string;
  now: () => Date;
  log: FastifyBaseLogger;
  /** `app.store.reload`: runs the restore swap with the watcher stopped, then re-reads the data dir. */
  reloadStore: (replace: () => Promise<void>) => Promise<void>;
  /** Regenerates the provider config after a restore. */
  regenerate: () => Promise<unknown>;
  /** File operations (the archive's final rename and the restore swap); default: node:fs. */
  fileOps?: Partial<SwapFileOps>;
  /** Hears of every archive created (also scheduled and safety ones), deleted (also by retention) and restored: the `backup` event. */
  notify?: (change: { id: string; action: 'created' | 'deleted' | 'restored' | 'failed'; message?: string }) => void;
}

export class BackupService {
  readonly backupDir: string;
  private readonly ops: SwapFileOps;
  private running: string | null = null;
  private current: Promise<unknown> | null = null;
  private readonly catalogue: BackupCatalogue;

  constructor(private readonly options: BackupServiceOptions) {
    this.backupDir = path.resolve(options.settings.dir);
    const dataDir = path.resolve(options.dataDir);
    if (this.backupDir === dataDir || this.backupDir.startsWith(dataDir + path.sep)) {
      // a restore replaces the data dir's items: archives inside it would be thrown away
      throw new Error(`backup.dir (${this.backupDir}) must lie outside storage.data_dir (${dataDir})`);
    }
    this.ops = { rename: options.fileOps?.rename ?? rename };
    this.catalogue = new BackupCatalogue(this.backupDir);
  }

  /** All backups, newest first (created_at, then id). */
  list(): Promise<BackupView[]> {
    return this.catalogue.list();
  }

  async get(id: string): Promise<BackupView> {
    const view = await this.catalogue.describe(id);
    if (!view) throw backupErrors.notFound(id);
    return view;
  }

  /** Absolute path and size of an archive, for the download. */
  async archive(id: string): Promise<{ file: string; size: number }> {
    const file = this.fileOf(id);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw backupErrors.notFound(id);
    return { file, size: info.size };
  }

  async dryRun(): Promise<{
    dry_run: true;
    would_create: string;
    files: number;
    bytes: number;
    entries: { path: string; size: number }[];
  }> {
    const taken = await this.catalogue.ids();
    const would = nextBackupId(this.options.now(), 'manual', (id) => taken.has(id));
    return { dry_run: true, would_create: would, ...(await planBackup(this.sources())) };
  }

  /** A manual backup, then retention. */
  create(note: string): Promise<BackupView> {
    return this.exclusive('backup', async () => {
      const view = await this.createUnlocked('manual', note);
      await this.applyRetention();
      return view;
    });
  }

  /** A `pre-update` backup taken by a container update job (API.md §4.11), then retention. */
  createPreUpdate(note: string): Promise<BackupView> {
    return this.exclusive('pre-update backup', async () => {
      const view = await this.createUnlocked('pre-update', note);
      await this.applyRetention();
      return view;
    });
  }

  remove(id: string): Promise<void> {
    return this.exclusive('backup deletion', async () => {
      try {
        await unlink(this.fileOf(id));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw backupErrors.notFound(id);
        throw err;
      }
      this.catalogue.forget(id);
      this.options.log.info({ backup_id: id }, 'backup deleted');
      this.options.notify?.({ id, action: 'deleted' });
    });
  }

  cleanup(): Promise<{ deleted: string[]; kept: number }> {
    return this.exclusive('cleanup', () => this.applyRetention());
  }

  restore(body: RestoreBodyType): Promise<RestoreResultType> {
    return this.exclusive('restore', async () => {
      const { file } = await this.archive(body.backup_id);
      const result = await runRestore({
        file,
        id: body.backup_id,
        dataDir: path.resolve(this.options.dataDir),
        restoreTokens: body.restore_tokens ?? false,
        includeExtra: body.include_extra ?? false,
        include: this.options.settings.include,
        limits: {
          maxBytes: this.options.settings.max_restore_bytes,
          maxEntries: this.options.settings.max_restore_entries,
        },
        ops: this.ops,
        log: this.options.log,
        safetyBackup: () => this.createUnlocked('pre-restore', `before restoring ${body.backup_id}`).then((v) => v.id),
        reloadStore: this.options.reloadStore,
        regenerate: this.options.regenerate,
      });
      this.options.notify?.({ id: body.backup_id, action: 'restored' });
      return result;
    });
  }

  /** The scheduled run: a `scheduled` backup and retention; skipped (logged) while something else runs. */
  async runScheduled(): Promise<void> {
    if (this.running) {
      this.options.log.warn({ running: this.running }, 'scheduled backup skipped: another operation is running');
      return;
    }
    await this.exclusive('scheduled backup', async () => {
      await this.createUnlocked('scheduled', '');
      await this.applyRetention();
    }).catch((err) => {
      this.options.log.error({ err }, 'scheduled backup failed');
      // the `backup` event tells open UIs and the notifications group (backups, error)
      this.options.notify?.({
        id: 'scheduled',
        action: 'failed',
        message: err instanceof Error ? err.message : String(err),
      });
    });
  }

  /** Waits for the running operation (shutdown must not cut an archive or a swap short). */
  async close(): Promise<void> {
    await this.current?.catch(() => undefined);
  }

  private async createUnlocked(kind: BackupKind, note: string): Promise<BackupView> {
    const started = performance.now();
    const createdAt = this.options.now();
    await mkdir(this.backupDir, { recursive: true, mode: 0o700 });
    const taken = await this.catalogue.ids();
    const id = nextBackupId(createdAt, kind, (candidate) => taken.has(candidate));
    this.options.log.info({ backup_id: id, kind }, 'backup started');
    const built = await buildBackup(this.sources(), { id, kind, note, createdAt }, this.ops.rename);
    const view: BackupView = {
      id,
      file: fileNameOf(id),
      size: built.size,
      created_at: createdAt.toISOString(),
      kind,
      note,
      app_version: this.options.appVersion,
      files: built.files,
    };
    await this.catalogue.remember(view);
    if (built.skipped.length > 0)
      this.options.log.warn(
        { backup_id: id, skipped: built.skipped },
        'backup left out entries that are not regular files or not readable',
      );
    const limit = this.options.settings.max_restore_entries;
    if (built.entries > limit)
      this.options.log.warn(
        { backup_id: id, entries: built.entries, max_restore_entries: limit },
        `backup ${id} holds ${built.entries} entries, more than restore accepts (backup.max_restore_entries = ${limit}): raise it (BACKUP_MAX_RESTORE_ENTRIES) to at least ${built.entries} before restoring this backup`,
      );
    this.options.log.info(
      {
        backup_id: id,
        kind,
        files: view.files,
        bytes: built.bytes,
        size: built.size,
        ms: Math.round(performance.now() - started),
      },
      'backup created',
    );
    this.options.notify?.({ id, action: 'created' });
    return view;
  }

  private async applyRetention(): Promise<{ deleted: string[]; kept: number }> {
    const backups = await this.list();
    const expired = selectExpired(backups, this.options.settings.retention, this.options.now());
    const deleted: string[] = [];
    for (const id of expired) {
      await unlink(this.fileOf(id)).then(
        () => {
          deleted.push(id);
          this.catalogue.forget(id);
          this.options.notify?.({ id, action: 'deleted' });
        },
        (err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        },
      );
    }
    if (deleted.length > 0)
      this.options.log.info(
        { deleted, retention: this.options.settings.retention },
        'old backups deleted by retention',
      );
    return { deleted, kept: backups.length - deleted.length };
  }

  /** Runs `work` unless another operation runs (then 409 `busy`). */
  private async exclusive<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.running) throw backupErrors.busy(this.running);
    this.running = what;
    const promise = work();
    this.current = promise;
    try {
      return await promise;
    } finally {
      this.running = null;
      this.current = null;
    }
  }

  private sources(): BackupSources {
    return {
      dataDir: this.options.dataDir,
      backupDir: this.backupDir,
      include: this.options.settings.include,
      appVersion: this.options.appVersion,
    };
  }

  private fileOf(id: string): string {
    return this.catalogue.fileOf(id);
  }
}
