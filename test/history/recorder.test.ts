/**
 * Config history (API.md §4.24) end to end: a real app on 127.0.0.1 with history on, writes through
 * the API with tokens and by hand (rename, as editors save), commits read back through the API and
 * with git itself.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { waitFor } from '../helpers/wait.ts';
import { commits, hasGit, rateLimit, startHistory } from './support.ts';

if (!hasGit) console.warn('SKIP config history tests: git not installed (apt-get install git)');
const gitTest = hasGit ? test : test.skip;

gitTest(
  'first start commits the data dir as gitops; an API write is a commit by the token with its audit line',
  async (t) => {
    const h = await startHistory(t);
    const first = await commits(h);
    t.true(first.length >= 1);
    const initial = first.at(-1);
    t.is(initial.author, 'gitops');
    t.is(initial.source, 'file');

    const created = await h.call('POST', '/api/middlewares', { body: rateLimit('Limit A') });
    t.is(created.status, 201);
    const list = await commits(h);
    const commit = list[0];
    t.is(commit.author, 'ops-alice');
    t.is(commit.source, 'api');
    t.deepEqual(commit.files, [{ path: 'middlewares/limit-a.yaml', change: 'added' }]);
    t.regex(commit.message, /^POST \/api\/middlewares 201\n/);
    const audit = JSON.parse(commit.message.split('\n')[2]);
    t.like(audit, { actor: 'ops-alice', method: 'POST', path: '/api/middlewares', status: 201, object_id: 'limit-a' });
    // git agrees, and the committed file is the file on disk (no secret in it)
    t.is(
      await h.git('show', `${commit.rev}:middlewares/limit-a.yaml`),
      await readFile(path.join(h.dataDir, 'middlewares', 'limit-a.yaml'), 'utf8'),
    );
    t.regex(await h.git('log', '-1', '--format=%an <%ae>', commit.rev), /^ops-alice <api@stack-manager>/);
  },
);

gitTest(
  'many writes within one batch window are one commit; the list filters by path, author, since and pages',
  async (t) => {
    const h = await startHistory(t, { history: { batch_ms: 1000 } });
    const before = (await commits(h)).length;
    const started = Date.now();
    const writes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.call('POST', '/api/middlewares', { body: rateLimit(`Burst ${i}`) })),
    );
    const writesMs = Date.now() - started;
    t.true(writes.every((w) => w.status === 201));
    const after = await commits(h);
    // batched per window of batch_ms: writes spread over w ms fall in at most ceil(w / 1000) + 1 windows
    // (a window opened by an earlier change may close in the middle of the burst: 19 + 1 seen in CI)
    const burst = after.slice(0, after.length - before).filter((c: any) => c.author === 'ops-alice');
    const authors = JSON.stringify(after.map((c: any) => [c.author, c.files.length]));
    t.true(burst.length <= Math.ceil(writesMs / 1000) + 1, `${writesMs} ms: ${authors}`);
    const files = after.slice(0, after.length - before).flatMap((c: any) => c.files.map((f: any) => f.path));
    t.is(new Set(files).size, 20);
    // the burst's commits list several audit lines (the newest may hold only the last write: 19 + 1)
    t.true(
      burst.some((c: any) => c.message.startsWith('POST /api/middlewares 201 (+')),
      authors,
    );

    const byPath = await h.call('GET', '/api/history?path=middlewares/burst-3.yaml');
    t.is(byPath.status, 200);
    t.is(byPath.body.length, 1);
    t.is(byPath.headers.get('x-total-count'), '1');
    t.is(
      (await h.call('GET', '/api/history?path=middlewares/burst-3')).body.length,
      1,
      'an object without its extension',
    );
    t.is(
      (await h.call('GET', '/api/history?path=middlewares')).headers.get('x-total-count'),
      String(after.length - before),
    );
    t.is(
      (await h.call('GET', '/api/history?author=gitops')).body.every((c: any) => c.author === 'gitops'),
      true,
    );
    t.is((await h.call('GET', '/api/history?author=nobody')).body.length, 0);
    t.is((await h.call('GET', '/api/history?since=2099-01-01T00:00:00Z')).body.length, 0);
    t.true((await h.call('GET', '/api/history?since=1h')).body.length >= 1);
    const paged = await h.call('GET', '/api/history?page=1&page_size=1');
    t.is(paged.body.length, 1);
    t.is(paged.headers.get('x-total-count'), String(after.length));
    t.regex(paged.headers.get('link') ?? '', /page=2&page_size=1>; rel="next"/);
    t.is((await h.call('GET', '/api/history?since=yesterday')).status, 422);
    t.is((await h.call('GET', '/api/history?path=../etc')).status, 422);
    t.is((await h.call('GET', '/api/history', { token: null })).status, 401);
    t.is((await h.call('GET', '/api/history', { token: h.tokens.viewer })).status, 200);
  },
);

gitTest('a hand edit saved by rename is a commit by gitops; an invalid hand edit is recorded too', async (t) => {
  const h = await startHistory(t);
  t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Edited') })).status, 201);
  await commits(h);
  const file = path.join(h.dataDir, 'middlewares', 'edited.yaml');
  const text = await readFile(file, 'utf8');
  const temp = path.join(h.dataDir, 'middlewares', '.edited.yaml.swp');
  await writeFile(temp, text.replace('average: 100', 'average: 7'));
  await rename(temp, file);
  const edit = await waitFor(async () => {
    const list = await commits(h);
    return list.find(
      (c: any) => c.author === 'gitops' && c.files.some((f: any) => f.path === 'middlewares/edited.yaml'),
    );
  }, 2000);
  t.is(edit.source, 'file');
  t.regex(edit.message, /^hand edit: middlewares\/edited\.yaml/);
  const shown = await h.call('GET', `/api/history/${edit.rev}`);
  t.is(shown.status, 200);
  t.regex(shown.body.files[0].diff, /^-\s+average: 100$/m);
  t.regex(shown.body.files[0].diff, /^\+\s+average: 7$/m);
  t.is(shown.body.diff, shown.body.files[0].diff);

  // a file that fails validation is still a change of the data dir
  await writeFile(path.join(h.dataDir, 'middlewares', 'broken.yaml'), 'name: [unclosed\n');
  const broken = await waitFor(async () => {
    const list = await commits(h);
    return list.find((c: any) => c.files.some((f: any) => f.path === 'middlewares/broken.yaml'));
  }, 2000);
  t.is(broken.author, 'gitops');
  t.is((await h.call('GET', '/api/history/0123456789abcdef')).status, 404);
  t.is((await h.call('GET', '/api/history/not-a-rev')).status, 422);
});

gitTest('two authors changing one file within one window: two commits, each with what its author wrote', async (t) => {
  const h = await startHistory(t, { history: { batch_ms: 3000 } });
  await commits(h);
  t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Shared', 100) })).status, 201);
  const file = path.join(h.dataDir, 'middlewares', 'shared.yaml');
  const temp = path.join(h.dataDir, 'middlewares', '.shared.yaml.swp');
  await writeFile(temp, (await readFile(file, 'utf8')).replace('average: 100', 'average: 7'));
  await rename(temp, file);
  const list = await waitFor(async () => {
    const all = await commits(h);
    return all[0].author === 'gitops' && all[0].files[0]?.path === 'middlewares/shared.yaml' ? all : null;
  }, 4000);
  const byToken = list.find((c: any) => c.author === 'ops-alice');
  t.truthy(byToken);
  t.regex(await h.git('show', `${byToken.rev}:middlewares/shared.yaml`), /average: 100/);
  t.regex(await h.git('show', `${list[0].rev}:middlewares/shared.yaml`), /average: 7/);
  t.is(await h.git('show', 'main:middlewares/shared.yaml'), await readFile(file, 'utf8'));
});
