/**
 * The startup check of the data and backup dirs (core/startup-checks.ts): a missing dir is created,
 * with the mode asked for (the backup dir 0700, API.md §4.10: archives hold the data dir's
 * secrets; it was created 0755 by this check before the backup group's own 0700 mkdir could), and
 * an existing dir keeps its mode.
 */
import test from 'ava';
import { chmod, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensureWritableDir } from '../../core/startup-checks.ts';
import { tempDir } from '../helpers/build.ts';

const modeOf = async (dir: string) => (await stat(dir)).mode & 0o777;

test('a missing backup dir is created 0700, nested parents included; an existing one keeps its mode', async (t) => {
  const root = await tempDir(t);
  const backups = path.join(root, 'new', 'backups');
  ensureWritableDir({ key: 'backup.dir', env: 'BACKUP_DIR', dir: backups, mode: 0o700 });
  t.is(await modeOf(backups), 0o700);

  const existing = path.join(root, 'existing');
  await mkdir(existing);
  await chmod(existing, 0o750);
  ensureWritableDir({ key: 'backup.dir', env: 'BACKUP_DIR', dir: existing, mode: 0o700 });
  t.is(await modeOf(existing), 0o750);
});

test('without a mode the dir gets the usual one (data dir: its files set their own modes)', async (t) => {
  const root = await tempDir(t);
  const data = path.join(root, 'data');
  ensureWritableDir({ key: 'storage.data_dir', env: 'DATA_DIR', dir: data });
  const reference = path.join(root, 'reference');
  await mkdir(reference);
  t.is(await modeOf(data), await modeOf(reference));
});
