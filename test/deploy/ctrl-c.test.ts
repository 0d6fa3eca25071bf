/**
 * Ctrl-C on `npm start` in a terminal (README Quick start): the terminal sends SIGINT to the whole
 * foreground process group, npm and the server, and npm forwards it to the server as well, so the
 * server gets SIGINT twice within milliseconds. That is one stop: graceful, `Stack Manager stopped`
 * last, exit 0. A repeat after
 * a second (another Ctrl-C) or another signal still ends it at once.
 */
import anyTest, { type TestFn } from 'ava';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useProductionApp, serverEnv, startServer, type ServerProcess } from '../helpers/production-app.ts';

const test = anyTest as TestFn<{ app: string; remove: () => Promise<void> }>;

useProductionApp(test);

async function ready(t: { teardown: (fn: () => Promise<void>) => void }, app: string, npm: boolean) {
  const work = await mkdtemp(path.join(tmpdir(), 'sm-ctrlc-'));
  await chmod(work, 0o755);
  t.teardown(() => rm(work, { recursive: true, force: true }));
  // detached: its own process group, as a shell gives a foreground job
  const server: ServerProcess = startServer(app, serverEnv(work), {
    detached: true,
    ...(npm ? { command: 'npm', args: ['start', '--silent'] } : {}),
  });
  t.teardown(async () => {
    try {
      process.kill(-server.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  await server.line('Stack Manager ready');
  const { pid } = await server.line('Stack Manager listening');
  return { server, pid: pid as number };
}

test.serial('Ctrl-C on `npm start` (SIGINT to the process group) stops the server gracefully', async (t) => {
  const { server, pid } = await ready(t, t.context.app, true);
  process.kill(-server.child.pid!, 'SIGINT');
  await server.exit;
  const stopped = await server.line('Stack Manager stopped');
  t.is(stopped.signal, 'SIGINT');
  t.is(server.lines.at(-1)!.msg, 'Stack Manager stopped', server.stderr());
  t.false(
    server.lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('second ')),
    server.stderr(),
  );
  t.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
});

test.serial('two SIGINTs sent at once to the server alone are one stop: exit 0, last line stopped', async (t) => {
  const { server } = await ready(t, t.context.app, false);
  server.child.kill('SIGINT');
  server.child.kill('SIGINT');
  const { code } = await server.exit;
  t.is(code, 0, server.stderr());
  t.is(server.lines.at(-1)!.msg, 'Stack Manager stopped');
});
