/** The data dir lock (core/data-dir-lock.ts), in process: holders alive or dead, here or elsewhere; out of backups. */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { lockDataDir, LOCK_NAME, OWNER_NAME, procStat, STALE_MS } from '../../core/data-dir-lock.ts';
import { StartupError } from '../../core/startup-checks.ts';
import { readManifestHead } from '../../plugins/backup/archive-read.ts';
import { tempDir } from '../helpers/build.ts';
import { buildBackupApp, call } from '../backups/support.ts';
import { REPO } from '../helpers/production-app.ts';
import { waitFor } from '../helpers/wait.ts';

/** A lock left by `owner`, refreshed `ageMs` ago (as proper-lockfile leaves it). */
async function foreignLock(
  dataDir: string,
  owner: { pid: number; host: string; proc_start?: string },
  ageMs = 0,
): Promise<void> {
  await mkdir(path.join(dataDir, LOCK_NAME), { recursive: true });
  await writeFile(path.join(dataDir, OWNER_NAME), JSON.stringify({ ...owner, started_at: '2026-01-01T00:00:00.000Z' }));
  const at = new Date(Date.now() - ageMs);
  await utimes(path.join(dataDir, LOCK_NAME), at, at);
}

/** A process that is alive until the test ends. */
function liveProcess(t: Parameters<typeof tempDir>[0]): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  return child.pid!;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/**
 * A process that takes the lock of `dataDir` and holds it, as the server does, started by a parent
 * that never waits for its children: `sh` forks it, then execs `sleep` (node would reap it through
 * libuv, a shell would at its next prompt). Killed, it stays a zombie while that parent lives.
 */
async function unreapedHolder(t: Parameters<typeof tempDir>[0], dataDir: string): Promise<number> {
  const script = `import { lockDataDir } from ${JSON.stringify(path.join(REPO, 'core', 'data-dir-lock.ts'))};
await lockDataDir(${JSON.stringify(dataDir)});
setInterval(() => {}, 1000);`;
  const parent = spawn(
    'sh',
    ['-c', '"$0" --import tsx --input-type=module -e "$1" & echo $!; exec sleep 600', process.execPath, script],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  // ending the parent hands the zombie to init, which reaps it
  t.teardown(() => {
    parent.kill('SIGKILL');
  });
  let out = '';
  parent.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const pid = await waitFor(() => (out.includes('\n') ? Number(out.trim()) : 0), 10_000);
  await waitFor(async () => {
    const owner = await readFile(path.join(dataDir, OWNER_NAME), 'utf8').catch(() => '');
    return owner.includes(`"pid":${pid}`);
  }, 10_000);
  return pid;
}

test('the lock records pid, host and start time, and release removes it', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(dataDir);
  const lock = await lockDataDir(dataDir);
  t.is(lock.file, path.join(dataDir, LOCK_NAME));
  const owner = JSON.parse(await readFile(path.join(dataDir, OWNER_NAME), 'utf8'));
  t.like(owner, { pid: process.pid, host: hostname(), proc_start: procStat(process.pid)!.start });
  t.regex(owner.proc_start, /^\d+$/);
  t.false(Number.isNaN(Date.parse(owner.started_at)));
  await lock.release();
  t.false(existsSync(path.join(dataDir, LOCK_NAME)));
  t.false(existsSync(path.join(dataDir, OWNER_NAME)));
});

test('a live holder on this host: refused with a StartupError (exit 78) naming the lock and the holder', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const pid = liveProcess(t);
  await foreignLock(dataDir, { pid, host: hostname() });
  const err = await t.throwsAsync(lockDataDir(dataDir), { instanceOf: StartupError });
  t.is(err!.exitCode, 78);
  t.true(err!.message.includes(path.join(dataDir, LOCK_NAME)));
  t.true(err!.message.includes(`pid ${pid} on host ${hostname()}, started 2026-01-01T00:00:00.000Z`), err!.message);
});

test('a dead holder on this host (SIGKILL, OOM): taken over at once', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await foreignLock(dataDir, { pid: await deadPid(), host: hostname() });
  const lock = await lockDataDir(dataDir);
  t.is(JSON.parse(await readFile(path.join(dataDir, OWNER_NAME), 'utf8')).pid, process.pid);
  await lock.release();
});

test('a holder killed with SIGKILL and not yet reaped (a zombie): taken over at once', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await mkdir(dataDir);
  const pid = await unreapedHolder(t, dataDir);
  // held by a live process: refused
  await t.throwsAsync(lockDataDir(dataDir), { instanceOf: StartupError, message: new RegExp(`pid ${pid} `) });
  process.kill(pid, 'SIGKILL');
  await waitFor(() => procStat(pid)?.state === 'Z', 10_000);
  t.is(procStat(pid)!.state, 'Z', 'the holder is a zombie: dead, not reaped');
  t.notThrows(() => process.kill(pid, 0), 'kill(pid, 0) still succeeds on a zombie');
  const lock = await lockDataDir(dataDir);
  t.is(JSON.parse(await readFile(path.join(dataDir, OWNER_NAME), 'utf8')).pid, process.pid);
  await lock.release();
});

test('a recorded pid now used by another process (its start time differs): taken over at once', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  const pid = liveProcess(t);
  const start = procStat(pid)!.start;
  await foreignLock(dataDir, { pid, host: hostname(), proc_start: String(Number(start) - 100) });
  const lock = await lockDataDir(dataDir);
  t.is(JSON.parse(await readFile(path.join(dataDir, OWNER_NAME), 'utf8')).pid, process.pid);
  await lock.release();
  // the same pid with its own start time is the holder: refused
  await foreignLock(dataDir, { pid, host: hostname(), proc_start: start });
  await t.throwsAsync(lockDataDir(dataDir), { instanceOf: StartupError });
});

test('a holder on another host (a shared volume): refused while refreshed, taken over once stale', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await foreignLock(dataDir, { pid: 1, host: 'other-container' });
  const err = await t.throwsAsync(lockDataDir(dataDir), { instanceOf: StartupError });
  t.true(err!.message.includes('pid 1 on host other-container'));
  await foreignLock(dataDir, { pid: 1, host: 'other-container' }, STALE_MS + 5000);
  const lock = await lockDataDir(dataDir);
  await lock.release();
  t.pass();
});

test('backups leave the lock and its owner record out', async (t) => {
  const { app, dataDir, backupDir } = await buildBackupApp(t);
  const lock = await lockDataDir(dataDir);
  t.teardown(() => lock.release());
  const created = await call(app, { method: 'POST', url: '/api/backup/create', payload: {} });
  t.is(created.status, 201, JSON.stringify(created.body));
  const manifest = await readManifestHead(path.join(backupDir, created.body.file));
  t.true(manifest!.files.length > 0);
  t.false(
    manifest!.files.some((f) => f.path.includes('.stack-manager')),
    JSON.stringify(manifest!.files.map((f) => f.path)),
  );
  t.deepEqual(app.store.invalidFiles(), [], 'the store does not read the lock files');
});
