/**
 * What the store reads (API.md §3.3, issue 12 items 2 and 6): regular files inside the data dir
 * only, at most 1 MiB each; symlinks, FIFOs and directories named like data files are listed as
 * invalid and never read; temp files left by interrupted writes are cleaned at startup.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';

const SECRET_MIDDLEWARE =
  'name: secret\ntype: headers\nconfig:\n  customRequestHeaders:\n    X-Secret: from-outside-the-data-dir\n';
const open = { auth: { mode: 'off' } };

async function invalidFiles(app: FastifyInstance): Promise<{ path: string; message: string }[]> {
  const res = await app.inject({ url: '/api/proxy-config/status' });
  return res.json().invalid_files;
}

async function generated(app: FastifyInstance): Promise<string> {
  return (await app.inject({ url: '/api/proxy-config' })).body;
}

test('a symlink in the data dir is an invalid file: listed with a reason, never read, served or emitted', async (t) => {
  const root = await tempDir(t);
  const dataDir = path.join(root, 'data');
  await mkdir(path.join(dataDir, 'middlewares'), { recursive: true });
  await writeFile(path.join(root, 'outside.yaml'), SECRET_MIDDLEWARE);
  await symlink(path.join(root, 'outside.yaml'), path.join(dataDir, 'middlewares', 'x.yaml'));
  const app = await build(t, { dataDir, config: open });

  t.is((await app.inject({ url: '/api/middlewares/x' })).statusCode, 404);
  const listed = (await invalidFiles(app)).find((f) => f.path === 'middlewares/x.yaml');
  t.truthy(listed, 'listed in /api/proxy-config/status');
  t.regex(listed!.message, /symbolic link/);
  t.false((await generated(app)).includes('from-outside-the-data-dir'));

  // one added while running is refused too
  await symlink(path.join(root, 'outside.yaml'), path.join(dataDir, 'middlewares', 'y.yaml'));
  await waitFor(async () => (await invalidFiles(app)).some((f) => f.path === 'middlewares/y.yaml'), 60_000);
  t.is((await app.inject({ url: '/api/middlewares/y' })).statusCode, 404);
  t.false((await generated(app)).includes('from-outside-the-data-dir'));
  t.is(await readFile(path.join(root, 'outside.yaml'), 'utf8'), SECRET_MIDDLEWARE, 'the target is untouched');
});

test('a symlinked single-file document (datasources.yaml) is not read either', async (t) => {
  const root = await tempDir(t);
  const dataDir = path.join(root, 'data');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path.join(root, 'sources.yaml'), 'active: pangolin\nsources: {}\n');
  await symlink(path.join(root, 'sources.yaml'), path.join(dataDir, 'datasources.yaml'));
  const app = await build(t, { dataDir, config: open });
  const listed = (await invalidFiles(app)).find((f) => f.path === 'datasources.yaml');
  t.truthy(listed);
  t.regex(listed!.message, /symbolic link/);
});

test('a FIFO or a directory named like a data file does not block startup and is listed', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(path.join(dataDir, 'middlewares', 'dir.yaml'), { recursive: true });
  execFileSync('mkfifo', [path.join(dataDir, 'middlewares', 'pipe.yaml')]);
  const app = await build(t, { dataDir, config: open });
  const files = await invalidFiles(app);
  t.regex(files.find((f) => f.path === 'middlewares/pipe.yaml')?.message ?? '', /named pipe/);
  t.regex(files.find((f) => f.path === 'middlewares/dir.yaml')?.message ?? '', /directory/);
});

test('a data file over 1 MiB is an invalid file with a clear reason, not parsed', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(path.join(dataDir, 'middlewares'), { recursive: true });
  const filler = `# ${'x'.repeat(1000)}\n`.repeat(5 * 1024); // 5 MiB of comments: valid YAML
  await writeFile(path.join(dataDir, 'middlewares', 'big.yaml'), `name: big\ntype: compress\nconfig: {}\n${filler}`);
  await writeFile(path.join(dataDir, 'middlewares', 'small.yaml'), 'name: small\ntype: compress\nconfig: {}\n');
  const app = await build(t, { dataDir, config: open });
  t.is((await app.inject({ url: '/api/middlewares/big' })).statusCode, 404);
  t.is((await app.inject({ url: '/api/middlewares/small' })).statusCode, 200);
  const listed = (await invalidFiles(app)).find((f) => f.path === 'middlewares/big.yaml');
  t.regex(listed?.message ?? '', /is 4\.9 MiB: data files are limited to 1\.0 MiB/);
});

test('temp files of interrupted writes older than a minute are removed at startup; younger ones stay', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(path.join(dataDir, 'middlewares'), { recursive: true });
  await mkdir(path.join(dataDir, 'auth'), { recursive: true });
  const stale = [
    path.join(dataDir, 'middlewares', '.a.yaml.0123456789ab.tmp'),
    path.join(dataDir, '.settings.yaml.ba9876543210.tmp'),
    path.join(dataDir, 'auth', '.tokens.yaml.aaaaaaaaaaaa.tmp'),
  ];
  const fresh = path.join(dataDir, 'middlewares', '.b.yaml.cdef01234567.tmp');
  const notTemp = path.join(dataDir, 'middlewares', 'notes.tmp');
  const old = new Date(Date.now() - 5 * 60_000);
  for (const file of [...stale, fresh, notTemp]) await writeFile(file, 'half a write');
  for (const file of [...stale, notTemp]) await utimes(file, old, old);
  await build(t, { dataDir, config: open });
  for (const file of stale) t.false(existsSync(file), `${path.relative(dataDir, file)} removed`);
  t.true(existsSync(fresh), 'a temp file younger than a minute may belong to a write in progress');
  t.true(existsSync(notTemp), "only the store's own temp-file names are removed");
});

test('a replicated file no collection owns is written as the replicator writes it: a new one 0644 (0600 for keys and auth/), an existing one keeps its mode', async (t) => {
  const root = await tempDir(t);
  const dataDir = path.join(root, 'data');
  const app = await build(t, { dataDir, config: open });
  const modeOf = async (relative: string) => (await stat(path.join(dataDir, relative))).mode & 0o777;
  await app.store.applyRemote('raw/notes.txt', Buffer.from('plain'));
  await app.store.applyRemote('raw/server.key', Buffer.from('secret'));
  await app.store.applyRemote('auth/extra.yaml', Buffer.from('secret'));
  t.is(await modeOf('raw/notes.txt'), 0o644);
  t.is(await modeOf('raw/server.key'), 0o600);
  t.is(await modeOf('auth/extra.yaml'), 0o600);
  await chmod(path.join(dataDir, 'raw', 'notes.txt'), 0o640);
  await app.store.applyRemote('raw/notes.txt', Buffer.from('changed'));
  t.is(await modeOf('raw/notes.txt'), 0o640);
  t.is(await readFile(path.join(dataDir, 'raw', 'notes.txt'), 'utf8'), 'changed');
  await app.store.applyRemote('raw/notes.txt', null);
  t.false(existsSync(path.join(dataDir, 'raw', 'notes.txt')));
});
