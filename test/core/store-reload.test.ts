/** YamlStore.reload(): the data dir's top-level items replaced by rename (a backup restore), then re-read. */
import test from 'ava';
import { Type } from '@sinclair/typebox';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../helpers/build.ts';
import { ItemSchema, type Item, openTestStore } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

const Doc = Type.Object({ title: Type.String() });

/** Builds a replacement `items/` dir and settings file beside the data dir, then swaps them in by rename. */
async function swapIn(root: string, dataDir: string, items: Record<string, string>, doc: string | null): Promise<void> {
  const staged = path.join(root, 'staged');
  const trash = path.join(root, 'trash');
  await rm(staged, { recursive: true, force: true });
  await rm(trash, { recursive: true, force: true });
  await mkdir(path.join(staged, 'items'), { recursive: true });
  await mkdir(trash);
  for (const [name, text] of Object.entries(items)) await writeFile(path.join(staged, 'items', name), text);
  await rename(path.join(dataDir, 'items'), path.join(trash, 'items'));
  await rename(path.join(staged, 'items'), path.join(dataDir, 'items'));
  await rename(path.join(dataDir, 'doc.yaml'), path.join(trash, 'doc.yaml'));
  if (doc !== null) {
    await writeFile(path.join(staged, 'doc.yaml'), doc);
    await rename(path.join(staged, 'doc.yaml'), path.join(dataDir, 'doc.yaml'));
  }
}

test.serial(
  'reload() takes in a swapped-in tree: objects, deletions, the document, invalid files, and later hand edits',
  async (t) => {
    const root = await tempDir(t);
    const dataDir = path.join(root, 'data');
    const store = await openTestStore(t, dataDir);
    const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
    const doc = await store.document<{ title: string }>({
      path: 'doc.yaml',
      schema: Doc,
      initial: () => ({ title: 'none' }),
    });
    await items.create('kept', { name: 'Kept', value: 1 });
    await items.create('dropped', { name: 'Dropped', value: 2 });
    await doc.update(() => ({ title: 'before' }));
    await writeFile(path.join(dataDir, 'items', 'broken.yaml'), 'name: [unclosed');
    await waitFor(() => store.invalidFiles().length === 1, 5000);
    await store.settle();

    const events: string[] = [];
    store.onAnyChange((event) => events.push(`${event.collection}:${event.id ?? ''}`));
    await swapIn(
      root,
      dataDir,
      { 'kept.yaml': 'name: Kept\nvalue: 10\n', 'added.yaml': 'name: Added\nvalue: 3\n' },
      'title: after\n',
    );
    await store.reload();

    t.deepEqual(
      items.list().map((o) => [o.id, o.data.value]),
      [
        ['added', 3],
        ['kept', 10],
      ],
    );
    t.is(doc.get().title, 'after');
    t.deepEqual(store.invalidFiles(), [], 'the broken file left with the old tree');
    for (const expected of ['items:added', 'items:kept', 'items:dropped', 'doc.yaml:'])
      t.true(events.includes(expected), `${expected} in ${events.join(', ')}`);

    // the watcher follows the new tree, not the moved-away one
    await writeFile(path.join(dataDir, 'items', 'later.yaml'), 'name: Later\nvalue: 4\n');
    await waitFor(() => items.has('later'), 5000);
    await writeFile(path.join(root, 'trash', 'items', 'ghost.yaml'), 'name: Ghost\nvalue: 5\n');
    await store.settle();
    t.false(items.has('ghost'));
  },
);

test('reload() brings back the initial value when the document is gone and recreates a missing collection dir', async (t) => {
  const root = await tempDir(t);
  const dataDir = path.join(root, 'data');
  const store = await openTestStore(t, dataDir, { watch: false });
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const doc = await store.document<{ title: string }>({
    path: 'doc.yaml',
    schema: Doc,
    initial: () => ({ title: 'none' }),
  });
  await items.create('one', { name: 'One', value: 1 });
  await doc.update(() => ({ title: 'set' }));
  await rename(path.join(dataDir, 'items'), path.join(root, 'gone'));
  await rename(path.join(dataDir, 'doc.yaml'), path.join(root, 'doc.yaml'));
  await store.reload();
  t.deepEqual(items.list(), []);
  t.is(doc.get().title, 'none');
  t.false(doc.exists());
  await items.create('two', { name: 'Two', value: 2 });
  t.deepEqual(
    items.list().map((o) => o.id),
    ['two'],
  );
});

test.serial(
  'reload(replace) runs the swap with the watcher stopped, then applies the result; a failing replace is rethrown after the re-read',
  async (t) => {
    const root = await tempDir(t);
    const dataDir = path.join(root, 'data');
    const store = await openTestStore(t, dataDir);
    const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
    await store
      .document<{ title: string }>({ path: 'doc.yaml', schema: Doc, initial: () => ({ title: 'none' }) })
      .then((d) => d.update(() => ({ title: 'x' })));
    await items.create('old', { name: 'Old', value: 1 });
    await store.settle();
    const events: string[] = [];
    store.onAnyChange((event) => events.push(`${event.collection}:${event.id ?? ''}`));

    await store.reload(async () => {
      await swapIn(root, dataDir, { 'new.yaml': 'name: New\nvalue: 2\n' }, 'title: y\n');
      await store.settle();
      t.deepEqual(events, [], 'nothing applied while the tree is being replaced');
      t.true(items.has('old'));
    });
    t.deepEqual(
      items.list().map((o) => o.id),
      ['new'],
    );
    t.true(events.includes('items:old') && events.includes('items:new'));

    // a replace that fails half-way: its error comes back, and what it did change is read anyway
    await t.throwsAsync(
      store.reload(async () => {
        await writeFile(path.join(dataDir, 'items', 'half.yaml'), 'name: Half\nvalue: 3\n');
        throw new Error('swap failed');
      }),
      { message: 'swap failed' },
    );
    t.deepEqual(
      items.list().map((o) => o.id),
      ['half', 'new'],
    );
    await writeFile(path.join(dataDir, 'items', 'watched.yaml'), 'name: Watched\nvalue: 4\n');
    await waitFor(() => items.has('watched'), 5000);
  },
);
