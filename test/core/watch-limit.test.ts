/**
 * The kernel's inotify watch limit (fs.inotify.max_user_watches) is shared by every process of a
 * uid, containers included, and chokidar takes one watch per data file: at 10,000 resources a
 * small host runs out. The server runs in a user namespace of its own whose limit
 * (/proc/sys/user/max_inotify_watches) is set below its file count, and must then switch to
 * polling by itself, log how to raise the limit, and still see hand edits to files that never got a
 * watch. storage.watch `poll` polls from the start.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/build.ts';
import { REPO, serverEnv, startServer, type ServerProcess } from '../helpers/production-app.ts';
import { waitFor } from '../helpers/wait.ts';

const test = anyTest as TestFn<{ userns: boolean }>;
const run = promisify(execFile);
const FILES = 120;
const LIMIT = 40;
/** Polling interval in these tests: an edit is seen within about one. */
const POLL_MS = 300;

test.before(async (t) => {
  // a user namespace (root here and on CI) whose own watch limit can be lowered without touching the host's
  t.context.userns = await run('unshare', [
    '--user',
    '--map-root-user',
    'sh',
    '-c',
    `echo ${LIMIT} > /proc/sys/user/max_inotify_watches`,
  ]).then(
    () => true,
    () => false,
  );
});

async function dataDirWithMiddlewares(t: ExecutionContext): Promise<string> {
  const work = await tempDir(t, 'sm-watch-');
  const dir = path.join(work, 'data', 'middlewares');
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < FILES; i++)
    await writeFile(path.join(dir, `m${i}.yaml`), `name: M ${i}\ntype: compress\nconfig: {}\n`);
  return work;
}

/** `node --import tsx plugins/main.ts` in a user namespace whose inotify watch limit is `limit`. */
function startLimited(work: string, limit: number, env: Record<string, string> = {}): ServerProcess {
  const node = `exec "$0" --max-semi-space-size=8 --import tsx plugins/main.ts`;
  return startServer(REPO, serverEnv(work, { DATA_POLL_INTERVAL_MS: String(POLL_MS), ...env }), {
    command: 'unshare',
    args: [
      '--user',
      '--map-root-user',
      'sh',
      '-c',
      `echo ${limit} > /proc/sys/user/max_inotify_watches && ${node}`,
      process.execPath,
    ],
  });
}

async function middlewareName(port: number, id: string): Promise<string | number> {
  const response = await fetch(`http://127.0.0.1:${port}/api/middlewares/${id}`);
  const body = (await response.json()) as { name?: string };
  return response.status === 200 ? body.name! : response.status;
}

/** Edits, adds and deletes files the way a GitOps checkout does, and waits for the API to show each. */
async function handEditsAreSeen(t: ExecutionContext, work: string, port: number): Promise<void> {
  const dir = path.join(work, 'data', 'middlewares');
  const last = `m${FILES - 1}`;
  t.is(await middlewareName(port, last), `M ${FILES - 1}`);
  await writeFile(path.join(dir, `${last}.yaml`), `name: Edited by hand\ntype: compress\nconfig: {}\n`);
  await writeFile(path.join(dir, 'added.yaml'), `name: Added by hand\ntype: compress\nconfig: {}\n`);
  await rm(path.join(dir, 'm0.yaml'));
  await waitFor(async () => (await middlewareName(port, last)) === 'Edited by hand', 60_000, 50);
  await waitFor(async () => (await middlewareName(port, 'added')) === 'Added by hand', 60_000, 50);
  await waitFor(async () => (await middlewareName(port, 'm0')) === 404, 60_000, 50);
  t.pass();
}

test.serial('at the inotify watch limit the server polls the data dir and still sees every hand edit', async (t) => {
  if (!t.context.userns) return t.log('SKIPPED: no user namespaces on this machine (unshare --user failed)');
  const work = await dataDirWithMiddlewares(t);
  const server = startLimited(work, LIMIT);
  t.teardown(() => {
    server.child.kill('SIGKILL');
  });
  const { port } = await server.line('Stack Manager listening');
  const warning = await server.line("the data dir watcher reached the kernel's inotify limit");
  t.is(warning.level, 40, 'a warning');
  t.is(warning.code, 'ENOSPC');
  t.is(warning.max_user_watches, LIMIT, 'the limit that applied, read from /proc');
  t.regex(warning.msg as string, /sysctl fs\.inotify\.max_user_watches=\d+/, 'says how to raise it');
  await server.line('watching the data dir by polling every 300 ms');
  await handEditsAreSeen(t, work, port as number);
  // the switch is logged once, not once per file that got no watch
  const limitLines = server.lines.filter(
    (l) => String(l.msg).includes('inotify') || l.msg === 'data dir watcher error',
  );
  t.is(limitLines.length, 1, JSON.stringify(limitLines.slice(0, 3)));
  server.child.kill('SIGTERM');
  t.is((await server.exit).code, 0);
});

test.serial('storage.watch poll (DATA_WATCH=poll) polls from the start and takes no inotify watch', async (t) => {
  if (!t.context.userns) return t.log('SKIPPED: no user namespaces on this machine (unshare --user failed)');
  const work = await dataDirWithMiddlewares(t);
  // a limit of 1 watch: any inotify watch on the data dir would fail and be logged
  const server = startLimited(work, 1, { DATA_WATCH: 'poll' });
  t.teardown(() => {
    server.child.kill('SIGKILL');
  });
  const { port } = await server.line('Stack Manager listening');
  await server.line('watching the data dir by polling every 300 ms');
  await handEditsAreSeen(t, work, port as number);
  t.deepEqual(
    server.lines.filter((l) => String(l.msg).includes('inotify') || l.msg === 'data dir watcher error'),
    [],
  );
  server.child.kill('SIGTERM');
  t.is((await server.exit).code, 0);
});

test('a bad storage.watch stops the server with exit 78 naming the key', async (t) => {
  const work = await tempDir(t, 'sm-watch-');
  const server = startServer(REPO, serverEnv(work, { DATA_WATCH: 'inotify' }), {
    args: ['--import', 'tsx', 'plugins/main.ts'],
  });
  t.teardown(() => {
    server.child.kill('SIGKILL');
  });
  t.is((await server.exit).code, 78);
  t.regex(server.stderr(), /storage\.watch/);
});
