/**
 * Backups while the data dir changes (issue 11): every file is read once and hashed from the bytes
 * archived, so edits, creations and deletions during a create never fail it, and the archive
 * restores (restore verifies every SHA-256 against the manifest). GNU tar reads it too, and every
 * file it extracts has the size and SHA-256 the manifest lists.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/build.ts';
import { buildBackupApp, call, sha256 } from './support.ts';

const run = promisify(execFile);

test('files rewritten, added and removed during a create never fail it; the manifest matches what GNU tar extracts and the archive restores', async (t) => {
  const { app, dataDir, backupDir } = await buildBackupApp(t);
  const bulk = path.join(dataDir, 'ext', 'bulk');
  await mkdir(bulk, { recursive: true });
  await Promise.all(
    Array.from({ length: 3000 }, (_, i) => writeFile(path.join(bulk, `item-${i}.yaml`), `value: ${i}\n`)),
  );
  await app.store.settle();

  let editing = true;
  let edits = 0;
  const editor = (async () => {
    for (let e = 0; editing; e++, edits++) {
      const i = e % 3000;
      if (e % 3 === 0) await writeFile(path.join(bulk, `item-${i}.yaml`), `value: ${i}\nedit: ${e}\n`);
      else if (e % 3 === 1) await rm(path.join(bulk, `item-${i}.yaml`), { force: true });
      else await writeFile(path.join(bulk, `new-${e}.yaml`), `new: ${e}\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const created = [];
  try {
    for (let round = 0; round < 3; round++)
      created.push(await call(app, { method: 'POST', url: '/api/backup/create' }));
  } finally {
    editing = false;
    await editor;
  }
  t.true(edits > 0, 'edits ran during the backups');
  for (const reply of created) t.is(reply.status, 201, JSON.stringify(reply.body));

  const last = created[created.length - 1].body as { id: string; files: number };
  const { stdout } = await run('tar', ['tzf', path.join(backupDir, `${last.id}.tar.gz`)], { maxBuffer: 16 << 20 });
  const names = stdout.trim().split('\n');
  t.is(names[0], 'manifest.json', 'the manifest is the first entry');
  t.is(names.filter((n) => !n.endsWith('/') && n !== 'manifest.json').length, last.files);

  // the manifest was hashed from the bytes archived: GNU tar's extraction agrees with every entry
  for (const reply of created) {
    const out = await tempDir(t, 'sm-untar-');
    await run('tar', ['xzf', path.join(backupDir, `${reply.body.id}.tar.gz`), '-C', out]);
    const manifest = JSON.parse(await readFile(path.join(out, 'manifest.json'), 'utf8'));
    t.is(manifest.files.length, reply.body.files);
    const wrong: string[] = [];
    for (const entry of manifest.files as { path: string; size: number; sha256: string }[]) {
      const bytes = await readFile(path.join(out, entry.path));
      if (bytes.length !== entry.size || sha256(bytes) !== entry.sha256) wrong.push(entry.path);
    }
    t.deepEqual(wrong, [], `${reply.body.id}: entries that differ from the manifest`);
  }

  const restored = await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: last.id } });
  t.is(restored.status, 200, JSON.stringify(restored.body));
  t.is(restored.body.files, last.files);
});
