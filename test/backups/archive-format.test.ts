/**
 * The archive writer's own encoders (issue 11): ustar headers written by hand must be exactly what
 * tar's Header writes, the synchronous gzip writer must produce one ordinary gzip member, and
 * entries that take the slow paths (files larger than the 1 MiB batch, long and non-ASCII paths)
 * must come out of GNU tar byte for byte as they went in, with the manifest's hashes.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { Header } from 'tar';
import { GzipFileWriter } from '../../plugins/backup/gzip-sync.ts';
import { fitsUstar, writeUstar, type UstarEntry } from '../../plugins/backup/ustar.ts';
import { tempDir } from '../helpers/build.ts';
import { buildBackupApp, call, sha256, snapshot } from './support.ts';

const run = promisify(execFile);

test('writeUstar writes the same 512 bytes as tar Header.encode for files and dirs', (t) => {
  const entries: UstarEntry[] = [
    { path: 'data/middlewares/rl-1.yaml', typeflag: '0', mode: 0o644, size: 70, mtime: 1_795_510_000 },
    { path: 'data/', typeflag: '5', mode: 0o700, size: 0, mtime: 0 },
    { path: 'data/auth/tokens.yaml', typeflag: '0', mode: 0o600, size: 0, mtime: 1 },
    { path: `data/${'a'.repeat(94)}`, typeflag: '0', mode: 0o755, size: 512, mtime: 2_000_000_000 },
    { path: 'extra/1-traefik.yml', typeflag: '0', mode: 0o4755, size: 0o77777777777, mtime: 1_234_567_890 },
  ];
  for (const entry of entries) {
    t.true(fitsUstar(entry), entry.path);
    const ours = Buffer.alloc(512 + 7, 0xff);
    writeUstar(ours, 7, entry);
    const theirs = new Header({
      path: entry.path,
      type: entry.typeflag === '0' ? 'File' : 'Directory',
      mode: entry.mode,
      size: entry.size,
      mtime: new Date(entry.mtime * 1000),
      uid: 0,
      gid: 0,
    });
    t.false(theirs.encode(), 'no PAX needed');
    t.deepEqual(ours.subarray(7), theirs.block!, entry.path);
    t.is(ours[6], 0xff, 'nothing written before the offset');
  }
  const file = { path: 'data/x', typeflag: '0', mode: 0o644, size: 1, mtime: 1 } as const;
  t.false(fitsUstar({ ...file, path: `data/${'a'.repeat(95)}` }), '100 bytes need the prefix field or PAX');
  t.false(fitsUstar({ ...file, path: 'data/café.yaml' }), 'non-ASCII paths get a PAX header');
  t.false(fitsUstar({ ...file, size: 8 * 1024 ** 3 }), '8 GiB needs base-256 and PAX');
});

test('GzipFileWriter writes one gzip member that gunzip and gzip -t accept', async (t) => {
  const dir = await tempDir(t, 'sm-gzip-');
  const file = path.join(dir, 'out.gz');
  const chunks = [randomBytes(300_000), Buffer.alloc(1024 * 1024, 'abc'), Buffer.alloc(0), Buffer.from('tail\n')];
  const fd = openSync(file, 'w');
  const writer = new GzipFileWriter(fd);
  for (const chunk of chunks) writer.write(chunk);
  writer.end();
  closeSync(fd);
  const bytes = readFileSync(file);
  t.is(writer.written, bytes.length);
  t.deepEqual(gunzipSync(bytes), Buffer.concat(chunks));
  await t.notThrowsAsync(run('gzip', ['-t', file]));
  t.true(bytes.length < 400_000, 'the repetitive MiB compressed');
});

test('large, long-named and non-ASCII files come out of GNU tar and a restore as they went in; links are left out', async (t) => {
  const { app, dataDir, backupDir } = await buildBackupApp(t);
  const bulk = path.join(dataDir, 'ext', 'bulk');
  const deep = path.join(bulk, 'd'.repeat(60), 'e'.repeat(60));
  await mkdir(deep, { recursive: true });
  // 2.5 MiB: spans three batches, so its header is patched in the file after the batch was flushed
  const big = randomBytes(2.5 * 1024 * 1024);
  await writeFile(path.join(bulk, 'big.bin'), big);
  await writeFile(path.join(deep, `${'f'.repeat(40)}.yaml`), 'deep: true\n');
  await writeFile(path.join(bulk, 'café-ü.yaml'), 'name: café\n');
  await writeFile(path.join(bulk, 'empty.yaml'), '');
  await symlink(path.join(bulk, 'empty.yaml'), path.join(bulk, 'link.yaml'));
  await app.store.settle();

  const created = await call(app, { method: 'POST', url: '/api/backup/create' });
  t.is(created.status, 201, JSON.stringify(created.body));
  const out = await tempDir(t, 'sm-untar-');
  await run('tar', ['xzf', path.join(backupDir, created.body.file), '-C', out]);
  const manifest = JSON.parse(await readFile(path.join(out, 'manifest.json'), 'utf8'));
  t.is(manifest.files.length, created.body.files);
  for (const entry of manifest.files as { path: string; size: number; sha256: string }[]) {
    const bytes = await readFile(path.join(out, entry.path));
    t.is(bytes.length, entry.size, entry.path);
    t.is(sha256(bytes), entry.sha256, entry.path);
  }
  t.deepEqual(await readFile(path.join(out, 'data', 'ext', 'bulk', 'big.bin')), big);
  const archived = await snapshot(path.join(out, 'data'));
  const source = await snapshot(dataDir);
  delete source[path.join('ext', 'bulk', 'link.yaml')];
  t.deepEqual(archived, source, 'every regular file, nothing else');
  t.false(
    manifest.files.some((f: { path: string }) => f.path.endsWith('link.yaml')),
    'symbolic links are not archived',
  );

  // restore streams the large entry to its file and hashes it on the way
  await writeFile(path.join(bulk, 'big.bin'), 'changed');
  const restored = await call(app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: created.body.id },
  });
  t.is(restored.status, 200, JSON.stringify(restored.body));
  t.deepEqual(await snapshot(dataDir), source);
});
