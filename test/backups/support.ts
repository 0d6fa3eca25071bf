/** Helpers of the backup tests: an app with BACKUP_DIR in a temp dir, and hand-made archives. */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { entryPack } from '../../plugins/backup/archive-write.ts';
import { build, tempDir, type BuildTestOptions } from '../helpers/build.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { writeSources } from '../resources/support.ts';
import { builtinGroups } from '../../plugins/index.ts';
import backupsPlugin, { type BackupsOptions } from '../../plugins/backup/index.ts';
import type { GroupOptions } from '../../core/types.ts';

export { assertClientError, call, snapshot } from '../middlewares/support.ts';

export interface BackupApp {
  app: FastifyInstance;
  root: string;
  dataDir: string;
  backupDir: string;
}

/**
 * An app (auth off) on `<root>/data` with BACKUP_DIR `<root>/backups`; `backupOptions` are handed
 * to the backups group (file operations, schedule clock) through a replacement group entry.
 */
export async function buildBackupApp(
  t: ExecutionContext,
  options: BuildTestOptions & {
    backup?: Record<string, unknown>;
    backupOptions?: Omit<BackupsOptions, keyof GroupOptions>;
    /** Reuse the data dir and BACKUP_DIR of an earlier app (a restart with other settings). */
    root?: string;
    /** Serve a fake Pangolin (the provider config is produced only once an upstream answered). */
    upstream?: boolean;
  } = {},
): Promise<BackupApp> {
  const root = options.root ?? (await tempDir(t, 'sm-backup-'));
  const dataDir = path.join(root, 'data');
  const backupDir = path.join(root, 'backups');
  const { backup = {}, backupOptions, config = {}, root: _root, upstream = false, ...rest } = options;
  let datasources = {};
  if (upstream) {
    const fake = await startFakeUpstream();
    t.teardown(() => fake.close());
    await writeSources(dataDir, fake);
    datasources = { datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' } };
  }
  const groups = backupOptions
    ? builtinGroups.map((group) =>
        group.name !== 'backup'
          ? group
          : {
              name: 'backup',
              // same plugin, same name and dependencies: only the options differ
              plugin: fp(
                async (app: FastifyInstance, opts: GroupOptions) =>
                  app.register(backupsPlugin, { ...opts, ...backupOptions }),
                { name: 'backups-test' },
              ),
            },
      )
    : undefined;
  const app = await build(t, {
    ...rest,
    dataDir,
    groups,
    config: {
      auth: { mode: 'off' },
      ...datasources,
      backup: {
        dir: backupDir,
        retention: { keep_last: 10, max_age_days: 30 },
        schedule: '',
        include: [],
        max_restore_bytes: 1073741824,
        max_restore_entries: 10000,
        ...backup,
      },
      ...config,
    },
  });
  if (upstream) await app.resources.started();
  return { app, root, dataDir, backupDir };
}

/** Names of the files in BACKUP_DIR (none when it does not exist). */
export async function backupFiles(backupDir: string): Promise<string[]> {
  return (await readdir(backupDir).catch(() => [] as string[])).sort();
}

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

export interface CraftEntry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link';
  data?: string;
  linkpath?: string;
  mode?: number;
}

/** A manifest listing `files` with their true sizes and hashes (callers then tamper with it). */
export function manifestFor(files: CraftEntry[], extra: { path: string; original_path: string }[] = []) {
  return {
    format: 1,
    created_at: '2020-01-01T00:00:00.000Z',
    app_version: '0.0.0-test',
    kind: 'manual',
    note: 'crafted',
    files: files
      .filter((f) => (f.type ?? 'File') === 'File')
      .map((f) => ({ path: f.path, size: Buffer.byteLength(f.data ?? ''), sha256: sha256(f.data ?? '') })),
    extra,
  };
}

/** Writes a tar (gzip'd unless `gzip: false`) with exactly these entries, absolute paths kept. */
export async function craftArchive(
  file: string,
  entries: CraftEntry[],
  options: { gzip?: boolean } = {},
): Promise<void> {
  const { pack, add } = entryPack({ gzip: options.gzip ?? true, preservePaths: true });
  const written = pipeline(pack, createWriteStream(file, { mode: 0o600 }));
  for (const entry of entries) {
    const type = entry.type ?? 'File';
    await add(
      {
        path: entry.path,
        type,
        mode: entry.mode ?? (type === 'Directory' ? 0o755 : 0o644),
        linkpath: entry.linkpath,
        mtime: new Date('2020-01-01T00:00:00Z'),
      },
      type === 'File' ? Buffer.from(entry.data ?? '') : undefined,
    );
  }
  pack.end();
  await written;
}

/** A middleware body for POST /api/middlewares. */
export const middleware = (id: string, average = 100) => ({
  id,
  name: `Limit ${id}`,
  type: 'rateLimit',
  config: { average, burst: 50 },
});
