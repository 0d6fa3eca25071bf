/**
 * The import's batch write (Collection.createMany through app.middlewares.createMany) on a real
 * app over 127.0.0.1 with the config history on: every object is written, the history credits the
 * importing token, and the events stream carries one event per object.
 */
import test from 'ava';
import { waitFor } from '../helpers/wait.ts';
import { commits, hasGit, startHistory } from '../history/support.ts';
import { mmDatabase } from './mm-db.ts';

if (!hasGit) console.warn('SKIP import history test: git not installed (apt-get install git)');
const gitTest = hasGit ? test : test.skip;

// 80: past the size from which the store writes a batch with the watcher detached
const COUNT = 80;

gitTest(
  'an 80-middleware import is written as one batch, credited to the importing token in the history',
  async (t) => {
    const h = await startHistory(t);
    const admin = await h.app.auth.create('importer', 'admin');
    if (admin === 'exists') throw new Error('token exists');
    await commits(h); // the initial commit of the data dir is made
    const events: string[] = [];
    h.app.store.onAnyChange((event) => {
      if (event.collection === 'middlewares' && event.id) events.push(`${event.action} ${event.id}`);
    });
    const database = await mmDatabase({
      middlewares: Array.from({ length: COUNT }, (_, i) => ({
        id: `mw-${i}`,
        name: `Imported ${i}`,
        type: 'rateLimit',
        config: { average: 100 + i, burst: 50 },
      })),
    });

    const response = await fetch(`${h.base}/api/import/middleware-manager`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(database),
    });
    const body = (await response.json()) as { created: { middlewares: unknown[] } };
    t.is(response.status, 200, JSON.stringify(body));
    t.is(body.created.middlewares.length, COUNT);
    t.is((await h.call('GET', '/api/middlewares?page_size=500')).body.length, COUNT);
    t.deepEqual([...events].sort(), Array.from({ length: COUNT }, (_, i) => `created mw-${i}`).sort());

    // every file in commits by the importer, with the import's audit line; none by gitops (a hand edit)
    const expected = Array.from({ length: COUNT }, (_, i) => `middlewares/mw-${i}.yaml`).sort();
    const byImporter = await waitFor(async () => {
      const list = await commits(h);
      const files = list
        .filter((c: any) => c.author === 'importer')
        .flatMap((c: any) => c.files.map((f: any) => f.path))
        .sort();
      return files.length === COUNT ? list : null;
      // one or two batch windows (history.batch_ms 1 s) on an idle machine
    }, 2000);
    const ours = byImporter.filter((c: any) => c.author === 'importer');
    t.deepEqual(ours.flatMap((c: any) => c.files.map((f: any) => f.path)).sort(), expected);
    t.true(
      ours.every((c: any) => c.source === 'api' && /^POST \/api\/import\/middleware-manager 200\n/.test(c.message)),
    );
    t.false(
      byImporter.some((c: any) => c.author === 'gitops' && c.files.some((f: any) => f.path.startsWith('middlewares/'))),
    );
  },
);
