/**
 * Config history (API.md §4.24): discovery changes authored `discovery` (Pangolin fake), pushes to a
 * local bare repository (file://), push failures reported and retried without touching writes, and
 * `max_commits` squashing the older history into one commit.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { tempDir } from '../helpers/build.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { waitFor } from '../helpers/wait.ts';
import { commits, hasGit, rateLimit, startHistory, writeSources } from './support.ts';

const run = promisify(execFile);
if (!hasGit) console.warn('SKIP config history remote tests: git not installed (apt-get install git)');
const gitTest = hasGit ? test : test.skip;

gitTest('a discovery sync is a commit by discovery', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dataDir = path.join(await tempDir(t, 'sm-history-'), 'data');
  await writeSources(dataDir, fake);
  const h = await startHistory(t, {
    dataDir,
    config: { datasources: { pangolin_url: fake.pangolinUrl, traefik_url: fake.url, active: 'pangolin' } },
  });
  await h.app.resources.started();
  await commits(h);
  fake.state.pangolinFile = 'traefik-config-changed.json';
  await h.app.resources.syncNow();
  const sync = await waitFor(async () => (await commits(h)).find((c: any) => c.author === 'discovery'), 2000);
  t.is(sync.source, 'discovery');
  t.regex(sync.message, /^discovery sync: resources\//);
  t.true(sync.files.every((f: any) => f.path.startsWith('resources/')));
  t.true(sync.files.some((f: any) => f.change === 'added'));
});

gitTest(
  'every batch is pushed to a local bare repository; a failing remote is reported and retried, writes unaffected',
  async (t) => {
    const dir = await tempDir(t, 'sm-remote-');
    const bare = path.join(dir, 'remote.git');
    await run('git', ['init', '--quiet', '--bare', bare]);
    const h = await startHistory(t, { history: { remote_url: `file://${bare}` } });
    t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Pushed') })).status, 201);
    await commits(h);
    await h.app.history.pushed();
    const head = (await h.call('GET', '/api/history/status')).body;
    t.is(head.remote.pushed_head, head.head);
    t.is(head.remote.last_error, null);
    const remoteHead = (await run('git', ['--git-dir', bare, 'rev-parse', 'refs/heads/main'])).stdout.trim();
    t.is(remoteHead, head.head);
    const remoteFile = (await run('git', ['--git-dir', bare, 'show', 'main:middlewares/pushed.yaml'])).stdout;
    t.is(remoteFile, await readFile(path.join(h.dataDir, 'middlewares', 'pushed.yaml'), 'utf8'));

    // a remote that refuses: writes still 201, the failure in status, retried
    const broken = await startHistory(t, { history: { remote_url: `file://${path.join(dir, 'missing.git')}` } });
    t.is((await broken.call('POST', '/api/middlewares', { body: rateLimit('Not pushed') })).status, 201);
    await commits(broken);
    const status = await waitFor(async () => {
      const s = (await broken.call('GET', '/api/history/status')).body;
      return s.remote.last_error ? s : null;
    }, 2000);
    t.regex(status.remote.last_error.message, /git push/);
    t.is(status.remote.pushed_head, null);
    // the remote appears: the retry pushes
    await run('git', ['init', '--quiet', '--bare', path.join(dir, 'missing.git')]);
    await waitFor(async () => (await broken.call('GET', '/api/history/status')).body.remote.pushed_head, 5000, 100);
    t.pass();
  },
);

gitTest(
  'history.max_commits squashes the older history into one commit; the head tree and recent commits are kept; packs are folded',
  async (t) => {
    const h = await startHistory(t, { history: { max_commits: 10, batch_ms: 10 } });
    for (let i = 0; i < 24; i++) {
      t.is((await h.call('POST', '/api/middlewares', { body: rateLimit(`Squash ${i}`) })).status, 201);
      await commits(h);
    }
    const list = await commits(h);
    t.true(list.length <= 10, `${list.length} commits`);
    const oldest = list.at(-1);
    t.regex(oldest.message, /^squashed history: \d+ older commits/);
    t.is(oldest.author, 'stack-manager');
    t.is(list[0].author, 'ops-alice');
    t.deepEqual(list[0].files, [{ path: 'middlewares/squash-23.yaml', change: 'added' }]);
    // nothing lost: the head holds every middleware
    const tree = await h.git('ls-tree', '-r', '--name-only', 'main', 'middlewares/');
    for (let i = 0; i < 24; i++) t.true(tree.includes(`middlewares/squash-${i}.yaml`));
    t.is((await h.git('rev-list', '--count', 'main')).trim(), String(list.length));
    // 25+ batches, one pack each from fast-import: folded by the periodic geometric repack
    const packs = (await readdir(path.join(h.dataDir, '.history', 'objects', 'pack'))).filter((f) =>
      f.endsWith('.pack'),
    );
    t.true(packs.length < 20, `${packs.length} packs`);
    t.is((await h.git('fsck', '--no-progress', '--no-dangling')).trim(), '');
  },
);
