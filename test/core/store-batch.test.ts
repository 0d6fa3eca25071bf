/**
 * The store's batch create and delete (Collection.createMany / deleteMany, used by the
 * middleware-manager import): all or nothing, one change event per object, on a watched data dir.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { ItemSchema, type Item, openTestStore } from '../helpers/store.ts';
import { isStoreError, type ChangeEvent } from '../../core/store/index.ts';

// 60: past the size from which a batch runs with the watcher detached and its events held
const items = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: `item-${from + i}`, data: { name: `Item ${from + i}`, value: i } }));

const yamlFiles = async (dir: string) => (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();

test('createMany writes every object with one event each; a taken id or an invalid object writes nothing', async (t) => {
  const dataDir = await tempDir(t);
  const store = await openTestStore(t, dataDir);
  const collection = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const dir = path.join(dataDir, 'items');
  await collection.create('item-5', { name: 'Taken', value: 1 });
  const events: ChangeEvent<Item>[] = [];
  collection.onChange((event) => events.push(event));

  const taken = await t.throwsAsync(collection.createMany(items(0, 60)));
  t.true(isStoreError(taken, 'already_exists'), String(taken));
  const invalid = [...items(100, 59), { id: 'item-bad', data: { name: 'Bad', value: 'x' as unknown as number } }];
  await t.throwsAsync(collection.createMany(invalid), { message: /invalid items\/item-bad/ });
  t.deepEqual(await yamlFiles(dir), ['item-5.yaml']);
  t.deepEqual(events, []);

  const created = await collection.createMany(items(200, 60));
  t.deepEqual(
    created.map((o) => o.id),
    items(200, 60).map((i) => i.id),
  );
  t.is((await yamlFiles(dir)).length, 61);
  const file = parse(await readFile(path.join(dir, 'item-259.yaml'), 'utf8'));
  t.like(file, { name: 'Item 259', value: 59 });
  t.is(collection.list().length, 61);
  t.is(events.length, 60);
  t.true(events.every((e) => e.type === 'upsert' && e.previous === undefined && e.source === 'api'));
  await store.settle();
  t.is(events.length, 60, 'the watcher took none of our files for a hand edit');
});

test('a createMany whose write fails midway removes what it wrote; deleteMany removes a batch', async (t) => {
  const dataDir = await tempDir(t);
  const store = await openTestStore(t, dataDir);
  const collection = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const dir = path.join(dataDir, 'items');
  // a directory where one file goes: the rename of that file fails after others were written
  await mkdir(path.join(dir, 'item-30.yaml'));
  const events: ChangeEvent<Item>[] = [];
  collection.onChange((event) => events.push(event));

  await t.throwsAsync(collection.createMany(items(0, 60)), { code: 'EISDIR' });
  t.deepEqual(await yamlFiles(dir), ['item-30.yaml']);
  t.deepEqual(collection.list(), []);
  // what was written and removed again was announced both ways: listeners end where they started
  const upserts = events.filter((e) => e.type === 'upsert').map((e) => e.id);
  const deletes = events.filter((e) => e.type === 'delete').map((e) => e.id);
  t.true(upserts.length > 0);
  t.deepEqual([...deletes].sort(), [...upserts].sort());

  await collection.createMany(items(100, 60));
  events.length = 0;
  const ids = items(100, 60).map((i) => i.id);
  t.deepEqual(await collection.deleteMany([...ids, 'item-999']), [...ids.map(() => true), false]);
  t.deepEqual(await yamlFiles(dir), ['item-30.yaml']);
  t.deepEqual(collection.list(), []);
  // one event per object (in the order the concurrent removals finished)
  t.deepEqual(events.map((e) => `${e.type} ${e.id}`).sort(), ids.map((id) => `delete ${id}`).sort());
});
