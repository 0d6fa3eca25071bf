/**
 * Config history (API.md §4.24): secrets never reach a commit or a diff, restores of a deleted
 * object and of a whole change (one new commit by `restore`, validated like hand edits: 422 and
 * nothing written when a file no longer validates), and writes that never depend on git.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { waitFor } from '../helpers/wait.ts';
import { tempDir } from '../helpers/build.ts';
import { commits, hasGit, rateLimit, startHistory, type HistoryHarness } from './support.ts';

if (!hasGit) console.warn('SKIP config history restore tests: git not installed (apt-get install git)');
const gitTest = hasGit ? test : test.skip;

/** Every committed byte of the repository (all blobs of all commits) as one string. */
async function everything(h: HistoryHarness): Promise<string> {
  const revs = (await h.git('rev-list', 'main')).trim().split('\n');
  const parts = [await h.git('log', '-p', '--all')];
  for (const rev of revs) parts.push(await h.git('grep', '-h', '-I', '-e', '.', rev).catch(() => ''));
  return parts.join('\n');
}

gitTest('secrets are committed as keyed hashes: datasource password, channel token, token hashes, keys', async (t) => {
  const h = await startHistory(t);
  const password = 'pa55-Very-Secret-9431';
  const put = await h.call('PUT', '/api/datasource/extra', {
    body: { type: 'traefik', url: 'http://127.0.0.1:9/', basic_auth: { username: 'u', password } },
  });
  t.is(put.status, 201, JSON.stringify(put.body));
  const token = 'tk_ntfy_secret_7781';
  const channel = await h.call('POST', '/api/notifications/channels', {
    body: { name: 'Phone', type: 'ntfy', config: { url: 'http://127.0.0.1:9', topic: 'alerts', token } },
  });
  t.is(channel.status, 201, JSON.stringify(channel.body));
  await writeFile(
    path.join(h.dataDir, 'mtls-test.key'),
    '-----BEGIN PRIVATE KEY-----\nMIIBVQ==\n-----END PRIVATE KEY-----\n',
  );
  // any write commits the raw files beside it
  t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Around') })).status, 201);
  const list = await commits(h);
  const sourceCommit = list.find(
    (c: any) => c.author === 'ops-alice' && c.files.some((f: any) => f.path === 'datasources.yaml'),
  );
  t.truthy(sourceCommit, JSON.stringify(list.map((c: any) => [c.author, c.files])));
  const shown = await h.call('GET', `/api/history/${sourceCommit.rev}`);
  t.regex(shown.body.diff, /password: redacted:[0-9a-f]{16}/);
  t.false(shown.body.diff.includes(password));

  const all = await everything(h);
  t.false(all.includes(password), 'the datasource password is in no commit');
  t.false(all.includes(token), 'the channel token is in no commit');
  t.false(all.includes('MIIBVQ=='), 'no private key in any commit');
  const tokens = parse(await h.git('show', 'main:auth/tokens.yaml'));
  t.true(tokens.every((entry: any) => /^redacted:[0-9a-f]{16}$/.test(entry.hash) && !('last_used_at' in entry)));
  // the hash is keyed: not the plain SHA-256 of the value
  const { createHash } = await import('node:crypto');
  t.false(all.includes(createHash('sha256').update(password).digest('hex').slice(0, 16)));
});

gitTest(
  'restore of a deleted object, of a whole change, a restore that no longer validates (422), unknown revs (404)',
  async (t) => {
    const h = await startHistory(t);
    t.is((await h.call('POST', '/api/middlewares', { body: rateLimit('Keep me', 10) })).status, 201);
    t.is(
      (
        await h.call('POST', '/api/services', {
          body: { name: 'Backend', type: 'loadBalancer', config: { servers: [{ url: 'http://127.0.0.1:8080' }] } },
        })
      ).status,
      201,
    );
    const created = (await commits(h))[0];
    const original = await readFile(path.join(h.dataDir, 'middlewares', 'keep-me.yaml'), 'utf8');
    t.is((await h.call('DELETE', '/api/middlewares/keep-me')).status, 204);
    t.is((await h.call('DELETE', '/api/services/backend')).status, 204);
    const deleted = (await commits(h))[0];
    t.deepEqual(
      deleted.files.map((f: any) => f.change),
      deleted.files.map(() => 'deleted'),
    );

    // one file back, as it was after the commit that created it
    const one = await h.call('POST', `/api/history/${created.rev.slice(0, 10)}/restore`, {
      body: { paths: ['middlewares/keep-me.yaml'] },
    });
    t.is(one.status, 200, JSON.stringify(one.body));
    t.deepEqual(one.body, { restored: ['middlewares/keep-me.yaml'], rev: created.rev });
    t.is(await readFile(path.join(h.dataDir, 'middlewares', 'keep-me.yaml'), 'utf8'), original);
    t.is((await h.call('GET', '/api/middlewares/keep-me')).status, 200);
    const restoreCommit = (await commits(h))[0];
    t.is(restoreCommit.author, 'restore');
    t.is(restoreCommit.source, 'restore');
    t.regex(restoreCommit.message, new RegExp(`^POST /api/history/${created.rev.slice(0, 10)}/restore 200`));
    t.deepEqual(restoreCommit.files, [{ path: 'middlewares/keep-me.yaml', change: 'added' }]);

    // the whole change: every file of `created` (both creates, unless a busy machine split them into two batches), one new commit
    const before = (await commits(h)).length;
    const whole = await h.call('POST', `/api/history/${created.rev}/restore`);
    t.is(whole.status, 200, JSON.stringify(whole.body));
    t.deepEqual(whole.body.restored.sort(), created.files.map((f: any) => f.path).sort());
    t.true(whole.body.restored.includes('services/backend.yaml'));
    const after = await commits(h);
    t.is(after.length, before + 1);
    t.deepEqual(after[0].files, [{ path: 'services/backend.yaml', change: 'added' }]);
    t.is((await h.call('GET', '/api/services/backend')).status, 200);

    // a chain whose member has been deleted since no longer validates: 422, nothing written, no commit
    t.is(
      (
        await h.call('POST', '/api/middlewares', {
          body: { name: 'Combo', type: 'chain', config: { middlewares: ['keep-me'] } },
        })
      ).status,
      201,
    );
    const combo = (await commits(h))[0];
    t.is((await h.call('DELETE', '/api/middlewares/combo')).status, 204);
    t.is((await h.call('DELETE', '/api/middlewares/keep-me')).status, 204);
    const head = (await commits(h))[0].rev;
    const refused = await h.call('POST', `/api/history/${combo.rev}/restore`, {
      body: { paths: ['middlewares/combo.yaml', 'services/backend.yaml'] },
    });
    t.is(refused.status, 422, JSON.stringify(refused.body));
    t.is(refused.body.id, 'validation_failed');
    t.is(refused.body.details.length, 1);
    t.is(refused.body.details[0].path, '/body/paths/0');
    t.regex(refused.body.details[0].message, /no longer validates.*keep-me/);
    await t.throwsAsync(
      readFile(path.join(h.dataDir, 'middlewares', 'combo.yaml'), 'utf8'),
      undefined,
      'nothing written',
    );
    t.is((await commits(h))[0].rev, head, 'no commit');

    t.is((await h.call('POST', '/api/history/abcdef0123/restore')).status, 404);
    t.is(
      (await h.call('POST', `/api/history/${created.rev}/restore`, { body: { paths: ['auth/tokens.yaml'] } })).status,
      422,
    );
    t.is((await h.call('POST', `/api/history/${created.rev}/restore`, { token: h.tokens.viewer })).status, 403);
  },
);

gitTest('a restored secret gets its real value back; the datasource password is never in the history', async (t) => {
  const h = await startHistory(t);
  const password = 'first-Secret-123';
  t.is(
    (
      await h.call('PUT', '/api/datasource/extra', {
        body: { type: 'traefik', url: 'http://127.0.0.1:9/', basic_auth: { username: 'u', password } },
      })
    ).status,
    201,
  );
  const first = (await commits(h))[0];
  t.is(
    (
      await h.call('PUT', '/api/datasource/extra', {
        body: { basic_auth: { username: 'u', password: 'second-Secret-456' } },
      })
    ).status,
    200,
  );
  await commits(h);
  const restored = await h.call('POST', `/api/history/${first.rev}/restore`, { body: { paths: ['datasources.yaml'] } });
  t.is(restored.status, 200, JSON.stringify(restored.body));
  const file = parse(await readFile(path.join(h.dataDir, 'datasources.yaml'), 'utf8'));
  t.is(file.sources.extra.basic_auth.password, password);
});

gitTest('git missing never fails a write: 2xx, the error in status, the history routes 503', async (t) => {
  const h = await startHistory(t, { history: { git_binary: '/nonexistent/git' } });
  const started = Date.now();
  const writes = await Promise.all(
    Array.from({ length: 10 }, (_, i) => h.call('POST', '/api/middlewares', { body: rateLimit(`No git ${i}`) })),
  );
  t.log(`10 writes with git missing: ${Date.now() - started} ms`);
  t.true(writes.every((w) => w.status === 201));
  const status = await waitFor(async () => {
    const s = (await h.call('GET', '/api/history/status')).body;
    return s.last_error ? s : null;
  }, 1000);
  t.false(status.available);
  t.regex(status.last_error.message, /git/);
  t.is((await h.call('GET', '/api/history')).status, 503);
});

gitTest('writes are answered while git is blocked: the commit follows once git runs again', async (t) => {
  // a git that waits for a gate file: while it is closed no git command can finish
  const dir = await tempDir(t, 'sm-gate-');
  const gate = path.join(dir, 'open');
  const wrapper = path.join(dir, 'git');
  await writeFile(wrapper, `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.02; done\nexec git "$@"\n`);
  await chmod(wrapper, 0o755);
  const h = await startHistory(t, { history: { git_binary: wrapper } });
  const writes = await Promise.all(
    Array.from({ length: 10 }, (_, i) => h.call('POST', '/api/middlewares', { body: rateLimit(`Gated ${i}`) })),
  );
  t.true(writes.every((w) => w.status === 201));
  t.is((await h.call('PUT', '/api/middlewares/gated-0', { body: rateLimit('Gated 0', 5) })).status, 200);
  t.is((await h.call('DELETE', '/api/middlewares/gated-9')).status, 204);
  const blocked = (await h.call('GET', '/api/history/status')).body;
  t.is(blocked.head, null, 'nothing committed while git is blocked');
  t.false(blocked.available);
  await writeFile(gate, '');
  const list = await waitFor(async () => {
    const s = (await h.call('GET', '/api/history/status')).body;
    return s.available && s.pending === 0 && s.head ? commits(h) : null;
  }, 3000);
  const files = new Set(list.flatMap((c: any) => c.files.map((f: any) => f.path)));
  for (let i = 0; i < 9; i++) t.true(files.has(`middlewares/gated-${i}.yaml`));
  t.false(files.has('middlewares/gated-9.yaml'), 'created and deleted before the first commit: never in history');
  // noted while the repository opened: still committed as the token's writes, not as hand edits
  const byToken = list
    .filter((c: any) => c.author === 'ops-alice')
    .flatMap((c: any) => c.files.map((f: any) => f.path));
  t.true(byToken.includes('middlewares/gated-0.yaml'));
});
