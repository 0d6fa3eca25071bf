/**
 * The audit line a history commit carries names the object a 201 created (API.md §2.11 object_id):
 * from the Location when it is the object's URL, else from the body's `id`/`name`. The audit log
 * says the same. Real app on 127.0.0.1 with history on.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { Type } from '@sinclair/typebox';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { BuiltinGroup } from '../../core/types.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { waitFor } from '../helpers/wait.ts';
import { commits, hasGit, rateLimit, startHistory, type HistoryHarness } from './support.ts';

if (!hasGit) console.warn('SKIP history object id tests: git not installed (apt-get install git)');
const gitTest = hasGit ? test : test.skip;

/** A test-only collection `notes` whose creates answer 201 without a Location, or with a filtered-list one. */
const notesGroup: BuiltinGroup = {
  name: 'history-notes-probe',
  plugin: fp(
    async (app: FastifyInstance) => {
      const notes = await app.store.collection<{ text: string }>({
        name: 'notes',
        schema: Type.Object({ text: Type.String() }),
      });
      const config = { auth: 'config' as const };
      app.post<{ Body: { id: string; text: string } }>('/api/test/notes', { config }, async (request, reply) => {
        await notes.create(request.body.id, { text: request.body.text });
        return reply.code(201).send({ id: request.body.id, text: request.body.text });
      });
      app.post<{ Body: { name: string } }>('/api/test/named-notes', { config }, async (request, reply) => {
        await notes.create(request.body.name, { text: 'named' });
        return reply
          .code(201)
          .header('location', `/api/test/notes?name=${request.body.name}`)
          .send({ name: request.body.name });
      });
    },
    { name: 'history-notes-probe', encapsulate: true, dependencies: ['auth'] },
  ),
};

/** The audit line (JSON) of the newest commit that changed `file`. */
async function auditOf(h: HistoryHarness, file: string): Promise<Record<string, unknown>> {
  // the change is noted once the write's response has gone (its audit line): idle() right after the
  // answer can come first on a busy machine (a clean-clone CI run: 'no commit of …'), so wait for it
  const commit = await waitFor(async () => (await commits(h, `?path=${file}`))[0] ?? null, 2_000, 50);
  return JSON.parse(commit.message.split('\n')[2]);
}

async function auditLogLines(h: HistoryHarness): Promise<Record<string, unknown>[]> {
  await h.app.audit.flush();
  const text = await readFile(path.join(h.dataDir, 'audit.log'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

gitTest('a create answered 201 with the object Location: the commit and the audit log name the object', async (t) => {
  const h = await startHistory(t);
  const created = await h.call('POST', '/api/middlewares', { body: rateLimit('Quota B') });
  t.is(created.status, 201);
  t.is(created.headers.get('location'), '/api/middlewares/quota-b');
  t.like(await auditOf(h, 'middlewares/quota-b.yaml'), {
    method: 'POST',
    path: '/api/middlewares',
    status: 201,
    object_id: 'quota-b',
  });
  // an update names it by :id, as before
  const updated = await h.call('PUT', '/api/middlewares/quota-b', { body: rateLimit('Quota B', 7) });
  t.is(updated.status, 200);
  const latest = await waitFor(async () => {
    const [newest] = await commits(h, '?path=middlewares/quota-b.yaml');
    return newest?.message.startsWith('PUT ') ? newest : null;
  }, 2_000);
  t.regex(latest.message, /^PUT \/api\/middlewares\/quota-b 200\n/);
  t.like(JSON.parse(latest.message.split('\n')[2]), { object_id: 'quota-b' });
  const logged = (await auditLogLines(h)).filter((l) => l.path === '/api/middlewares');
  t.like(logged.at(-1), { status: 201, object_id: 'quota-b' });
});

gitTest('a 201 without a Location, or with a filtered-list one, is named by the body id or name', async (t) => {
  const h = await startHistory(t, { groups: [...builtinGroups, notesGroup] });
  const plain = await h.call('POST', '/api/test/notes', { body: { id: 'note-1', text: 'hello' } });
  t.is(plain.status, 201);
  t.is(plain.headers.get('location'), null);
  t.like(await auditOf(h, 'notes/note-1.yaml'), { path: '/api/test/notes', status: 201, object_id: 'note-1' });

  const named = await h.call('POST', '/api/test/named-notes', { body: { name: 'note-2' } });
  t.is(named.status, 201);
  t.like(await auditOf(h, 'notes/note-2.yaml'), { path: '/api/test/named-notes', object_id: 'note-2' });

  // a refused create has no object
  const refused = await h.call('POST', '/api/test/notes', { body: { id: 'note-1', text: 'again' } });
  t.true(refused.status >= 400 && refused.status < 500, String(refused.status));
  const lines = await auditLogLines(h);
  t.deepEqual(
    lines.filter((l) => String(l.path).startsWith('/api/test/')).map((l) => [l.path, l.status, l.object_id]),
    [
      ['/api/test/notes', 201, 'note-1'],
      ['/api/test/named-notes', 201, 'note-2'],
      ['/api/test/notes', refused.status, null],
    ],
  );
});
