/**
 * Config history push failures as a §4.19 finding (API.md §4.24): `history_push_failed` in
 * GET /api/proxy-config/diagnosis while the remote fails, with one id while it persists, a
 * `diagnosis` event when raised and when cleared, and no credential in its text.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { commits, hasGit, rateLimit, startHistory, type HistoryHarness } from './support.ts';

const run = promisify(execFile);
if (!hasGit) console.warn('SKIP config history push finding tests: git not installed (apt-get install git)');
const gitTest = hasGit ? test : test.skip;

const pushFinding = async (h: HistoryHarness) => {
  const diagnosis = await h.call('GET', '/api/proxy-config/diagnosis');
  if (diagnosis.status !== 200) throw new Error(`diagnosis: ${diagnosis.status} ${JSON.stringify(diagnosis.body)}`);
  return diagnosis.body.findings.find((f: any) => f.kind === 'history_push_failed') ?? null;
};

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

gitTest(
  'a failing push raises history_push_failed (one id while it persists, a diagnosis event), cleared once the remote works',
  async (t) => {
    const dir = await tempDir(t, 'sm-push-finding-');
    const bare = path.join(dir, 'remote.git');
    const h = await startHistory(t, { history: { remote_url: `file://${bare}` } });
    const events: Array<{ finding: any; action: string }> = [];
    const stop = h.app.events.listen((type, data) => {
      if (type === 'diagnosis' && (data as any).finding.kind === 'history_push_failed') events.push(data as any);
    });
    t.teardown(stop);
    t.is(await pushFinding(h), null, 'nothing before a push failed');

    t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Unpushed') })).status, 201);
    await commits(h);
    const raised = await waitFor(() => pushFinding(h), 5000, 50);
    t.is(raised.severity, 'warning');
    t.is(raised.id, `history_push_failed:file://${bare}`);
    t.deepEqual(raised.resources, []);
    t.deepEqual(raised.middlewares, []);
    t.regex(raised.message, /git push/);
    t.true(raised.message.includes(bare));
    t.regex(raised.fix, /history\.remote_url/);
    t.deepEqual(
      events.map((e) => [e.action, e.finding.id]),
      [['raised', raised.id]],
    );

    // the retry fails again: the same finding, no second event
    const firstAttempt = (await h.call('GET', '/api/history/status')).body.remote.last_error.at;
    await waitFor(
      async () => (await h.call('GET', '/api/history/status')).body.remote.last_error?.at !== firstAttempt,
      10_000,
      100,
    );
    t.is((await pushFinding(h))?.id, raised.id);
    t.is(events.length, 1);

    // the remote appears: the next retry pushes, the finding goes with a cleared event
    await run('git', ['init', '--quiet', '--bare', bare]);
    await waitFor(async () => (await pushFinding(h)) === null, 20_000, 100);
    const status = (await h.call('GET', '/api/history/status')).body;
    t.is(status.remote.pushed_head, status.head);
    t.deepEqual(
      events.map((e) => [e.action, e.finding.id]),
      [
        ['raised', raised.id],
        ['cleared', raised.id],
      ],
    );
  },
);

gitTest('a remote URL on a closed 127.0.0.1 port is a finding naming the URL without its password', async (t) => {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}/history.git`;
  const h = await startHistory(t, {
    history: { remote_url: url, remote_username: 'pusher', remote_password: 's3cret-push-pw' },
  });
  t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Refused') })).status, 201);
  await commits(h);
  const finding = await waitFor(() => pushFinding(h), 10_000, 50);
  t.is(finding.id, `history_push_failed:${url}`);
  t.true(finding.message.includes(`127.0.0.1:${port}`), finding.message);
  t.false(JSON.stringify(finding).includes('s3cret-push-pw'));
  // writes are unaffected while the remote refuses
  t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Still written') })).status, 201);
});
