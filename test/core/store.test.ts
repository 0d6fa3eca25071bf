import test from 'ava';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdir, readFile, rm, writeFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { ItemSchema, type Item, memoryLogger, openTestStore } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';
import { openStore, StoreError } from '../../core/store/index.ts';
import { toAppError } from '../../core/errors/handler.ts';
import { matchingVersion } from '../../model/http.ts';

const run = promisify(execFile);
const fixtures = path.join(import.meta.dirname, '..', 'fixtures');

test.serial('50 concurrent writers on one object lose no update and every file parses', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 50 }, () =>
      items.update('counter', (current) => ({ name: 'counter', value: (current?.data.value ?? 0) + 1 })),
    ),
  );
  const elapsed = performance.now() - start;
  t.is(items.get('counter')?.data.value, 50);
  t.is(parse(await readFile(path.join(dir, 'items', 'counter.yaml'), 'utf8')).value, 50);
  t.log(`50 serialised read-modify-write updates in ${elapsed.toFixed(0)} ms`);
});

test('50 concurrent creates in one collection give 50 valid files', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  await Promise.all(Array.from({ length: 50 }, (_, i) => items.create(`item-${i}`, { name: `Item ${i}`, value: i })));
  const files = (await readdir(path.join(dir, 'items'))).filter((f) => f.endsWith('.yaml'));
  t.is(files.length, 50);
  for (const f of files) t.is(typeof parse(await readFile(path.join(dir, 'items', f), 'utf8')).value, 'number');
  t.is(items.list().length, 50);
  t.deepEqual(
    items.list().map((o) => o.id),
    [...items.list().map((o) => o.id)].sort(),
  );
});

test.serial('writers in 5 processes (10 updates each) lose no update', async (t) => {
  const dir = await tempDir(t);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 5 }, () =>
      run(process.execPath, ['--import=tsx', path.join(fixtures, 'store-incrementer.ts'), dir, '10']),
    ),
  );
  t.log(`5 processes × 10 updates in ${(performance.now() - start).toFixed(0)} ms (including process start)`);
  t.is(parse(await readFile(path.join(dir, 'items', 'counter.yaml'), 'utf8')).value, 50);
});

test('a writer killed with SIGKILL mid-write 50 times leaves every file old or new, never torn', async (t) => {
  t.timeout(300_000); // 50 process starts: about 30 s on an idle 2-core machine
  const dir = await tempDir(t);
  let checkedFiles = 0;
  for (let round = 1; round <= 50; round++) {
    const child = spawn(
      process.execPath,
      ['--import=tsx', path.join(fixtures, 'store-writer.ts'), dir, String(round)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`writer exited early with ${code}`)));
    });
    // let it write for a varying number of event-loop turns of ours, then kill without warning
    await new Promise((resolve) => setTimeout(resolve, 5 + ((round * 7) % 40)));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // a killed holder leaves its lock behind; recovering it after 10 s is proper-lockfile's job (stale)
    await rm(path.join(dir, 'items.lock'), { recursive: true, force: true });
    for (const f of (await readdir(path.join(dir, 'items'))).filter((n) => n.endsWith('.yaml'))) {
      const item = parse(await readFile(path.join(dir, 'items', f), 'utf8')) as Item;
      t.is(item.payload?.length, 20_000 + (item.value % 5000), `${f} in round ${round} is torn`);
      checkedFiles++;
    }
  }
  t.true(checkedFiles >= 50);
  // the survivors also load through the store without any invalid file
  const store = await openTestStore(t, dir, { watch: false });
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  t.deepEqual(store.invalidFiles(), []);
  t.true(items.list().length >= 1);
});

test('a hand edit is visible through the store (in under 1 s on an idle machine: logged, not timed)', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const events: string[] = [];
  items.onChange((e) => events.push(`${e.type}:${e.id}:${e.source}`));
  const start = performance.now();
  await writeFile(path.join(dir, 'items', 'hand.yaml'), 'name: By hand\nvalue: 7\n');
  await waitFor(() => items.get('hand'), 2000);
  const elapsed = performance.now() - start;
  t.log(`hand edit visible after ${elapsed.toFixed(0)} ms`);
  t.is(items.get('hand')?.data.value, 7);
  t.deepEqual(events, ['upsert:hand:file']);
  // timestamps come from the mtime and the file is not rewritten to add them
  t.regex(items.get('hand')!.created_at, /^\d{4}-\d\d-\d\dT/);
  t.is(await readFile(path.join(dir, 'items', 'hand.yaml'), 'utf8'), 'name: By hand\nvalue: 7\n');
});

test('an invalid hand edit keeps the last good object and is reported with its line', async (t) => {
  const dir = await tempDir(t);
  const logger = memoryLogger();
  const store = await openStore({ dataDir: dir, logger });
  t.teardown(() => store.close());
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  await items.create('good', { name: 'Good', value: 1 });
  const file = path.join(dir, 'items', 'good.yaml');
  await writeFile(file, '# edited\nname: Good\nvalue: not-a-number\n');
  const invalid = await waitFor(() => store.invalidFiles()[0], 3000);
  t.is(invalid.path, file);
  t.is(invalid.line, 3);
  t.regex(invalid.message, /value/);
  t.is(items.get('good')?.data.value, 1);
  t.is(logger.lines.filter((l) => l.level === 'warn').length, 1);
  // bad YAML syntax is reported with its line too (after one retry)
  await writeFile(file, 'name: Good\nvalue: [1, 2\n');
  await waitFor(() => store.invalidFiles()[0]?.message.startsWith('invalid YAML'), 3000);
  t.is(store.invalidFiles()[0].line, 3);
  // fixing the file clears the report and applies it
  await writeFile(file, 'name: Good\nvalue: 2\n');
  await waitFor(() => items.get('good')?.data.value === 2, 3000);
  t.deepEqual(store.invalidFiles(), []);
});

test('deleting a file by hand deletes the object; a new invalid file is ignored', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  await items.create('doomed', { name: 'Doomed', value: 1 });
  await unlink(path.join(dir, 'items', 'doomed.yaml'));
  await waitFor(() => !items.has('doomed'), 3000);
  await writeFile(path.join(dir, 'items', 'broken.yaml'), 'name: [\n');
  await waitFor(() => store.invalidFiles().length === 1, 3000);
  t.false(items.has('broken'));
  await writeFile(path.join(dir, 'items', 'Bad Name.yaml'), 'name: x\nvalue: 1\n');
  await waitFor(() => store.invalidFiles().length === 2, 3000);
  t.regex(store.invalidFiles().find((f) => f.path.endsWith('Bad Name.yaml'))!.message, /not a valid id/);
});

test('API writes keep comments and key order, and are not re-read as hand edits', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const file = path.join(dir, 'items', 'doc.yaml');
  await writeFile(file, '# owner: ops team\nvalue: 1 # the answer\nname: Documented\ntags: [a, b]\n');
  await waitFor(() => items.get('doc'), 3000);
  const sources: string[] = [];
  items.onChange((e) => sources.push(e.source));
  await items.update('doc', (c) => ({ ...c!.data, value: 2 }));
  await store.settle();
  const text = await readFile(file, 'utf8');
  t.true(text.startsWith('# owner: ops team\nvalue: 2'));
  t.true(text.indexOf('name:') > text.indexOf('value:'));
  t.regex(text, /updated_at:/);
  t.deepEqual(sources, ['api']);
});

test('a version mismatch, a taken id and a bad id are store errors that write nothing; the error handler answers 412, 409 and 422', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const created = await items.create('one', { name: 'One', value: 1 });
  const before = await readFile(path.join(dir, 'items', 'one.yaml'), 'utf8');
  const stale = await t.throwsAsync(
    items.put('one', { name: 'One', value: 2 }, { expect: matchingVersion('"0000"') }),
    { instanceOf: StoreError },
  );
  t.is(stale?.kind, 'version_conflict');
  t.like(toAppError(stale!, 1024), { statusCode: 412, id: 'precondition_failed' });
  t.is(await readFile(path.join(dir, 'items', 'one.yaml'), 'utf8'), before);
  await items.put('one', { name: 'One', value: 3 }, { expect: matchingVersion(`W/"${created.etag}"`) });
  t.is(items.get('one')?.data.value, 3);
  const taken = await t.throwsAsync(items.create('one', { name: 'One', value: 4 }), { instanceOf: StoreError });
  t.is(taken?.kind, 'already_exists');
  t.like(toAppError(taken!, 1024), { statusCode: 409, id: 'already_exists' });
  const badId = await t.throwsAsync(items.create('../escape', { name: 'x', value: 1 }), { instanceOf: StoreError });
  t.like(toAppError(badId!, 1024), { statusCode: 422, id: 'validation_failed' });
});

test('the ETag is the first 32 hex digits of the SHA-256 of the file bytes', async (t) => {
  const { createHash } = await import('node:crypto');
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const object = await items.create('hashed', { name: 'Hashed', value: 1 });
  const bytes = await readFile(path.join(dir, 'items', 'hashed.yaml'));
  t.is(object.etag, createHash('sha256').update(bytes).digest('hex').slice(0, 32));
});

test('documents: updates are atomic, secrets get mode 0600, hand edits are validated', async (t) => {
  const { stat } = await import('node:fs/promises');
  const { Type } = await import('@sinclair/typebox');
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const doc = await store.document<{ n: number }>({
    path: 'sub/secret.yaml',
    schema: Type.Object({ n: Type.Integer() }),
    initial: () => ({ n: 0 }),
    fileMode: 0o600,
  });
  await Promise.all(Array.from({ length: 20 }, () => doc.update((c) => ({ n: c.n + 1 }))));
  t.is(doc.get().n, 20);
  t.is((await stat(path.join(dir, 'sub', 'secret.yaml'))).mode & 0o777, 0o600);
  await writeFile(path.join(dir, 'sub', 'secret.yaml'), 'n: lots\n');
  await waitFor(() => store.invalidFiles().length === 1, 3000);
  t.is(doc.get().n, 20);
});

test('a bulk write of 200 objects is fast and a hand edit made meanwhile is not lost', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  await items.create('existing', { name: 'Existing', value: 1 });
  const sources: string[] = [];
  items.onChange((e) => {
    if (e.id === 'existing' || e.id === 'by-hand') sources.push(`${e.id}:${e.source}`);
  });
  const start = performance.now();
  const bulk = items.updateMany(
    Array.from({ length: 200 }, (_, i) => ({ id: `bulk-${i}`, mutate: () => ({ name: `Bulk ${i}`, value: i }) })),
  );
  await writeFile(path.join(dir, 'items', 'by-hand.yaml'), 'name: By hand\nvalue: 42\n');
  await writeFile(path.join(dir, 'items', 'existing.yaml'), 'name: Existing\nvalue: 2\n');
  const written = await bulk;
  t.log(`200 objects in one batch: ${(performance.now() - start).toFixed(0)} ms`);
  t.is(written.length, 200);
  t.is(items.list().filter((o) => o.id.startsWith('bulk-')).length, 200);
  await waitFor(() => items.get('by-hand')?.data.value === 42 && items.get('existing')?.data.value === 2, 3000);
  // the watcher is attached again: a later edit is seen as usual
  await writeFile(path.join(dir, 'items', 'bulk-7.yaml'), 'name: Edited\nvalue: 700\n');
  await waitFor(() => items.get('bulk-7')?.data.value === 700, 3000);
  t.true(sources.includes('by-hand:file'));
});

test('a collection dir made right after its parent dir appeared is watched: hand edits there are seen', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir);
  // like mtls/config.yaml and then the mtls/clients collection on a first start: chokidar lists
  // `group/` before `group/items` exists and never attached to the child on its own
  await store.document<{ name: string }>({
    path: 'group/config.yaml',
    schema: ItemSchema,
    initial: () => ({ name: 'x', value: 0 }),
  });
  const items = await store.collection<Item>({ name: 'group/items', schema: ItemSchema });
  await writeFile(path.join(dir, 'group', 'items', 'by-hand.yaml'), 'name: By hand\nvalue: 7\n');
  await waitFor(() => items.get('by-hand')?.data.value === 7, 5000);
  // and the watcher itself reports later edits there
  await writeFile(path.join(dir, 'group', 'items', 'by-hand.yaml'), 'name: By hand\nvalue: 8\n');
  await writeFile(path.join(dir, 'group', 'items', 'second.yaml'), 'name: Second\nvalue: 9\n');
  await waitFor(() => items.get('by-hand')?.data.value === 8 && items.get('second')?.data.value === 9, 5000);
  t.is(items.list().length, 2);
});

test('watch "later": edits made before the watcher is attached are taken in when it is, later ones by the watcher', async (t) => {
  const dir = await tempDir(t);
  const store = await openTestStore(t, dir, { watch: 'later' });
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  await items.create('kept', { name: 'Kept', value: 1 });
  await writeFile(path.join(dir, 'items', 'kept.yaml'), 'name: Kept\nvalue: 2\n');
  await writeFile(path.join(dir, 'items', 'early.yaml'), 'name: Early\nvalue: 3\n');
  t.is(items.get('kept')?.data.value, 1, 'not watched yet');
  t.is(items.get('early'), undefined);
  await store.startWatching();
  t.is(items.get('kept')?.data.value, 2);
  t.is(items.get('early')?.data.value, 3);
  await writeFile(path.join(dir, 'items', 'late.yaml'), 'name: Late\nvalue: 4\n');
  await waitFor(() => items.get('late')?.data.value === 4, 5000);
});

test('polling (storage.watch poll): hand edits, deletes and bulk writes are seen; API writes are not re-read as hand edits', async (t) => {
  const dir = await tempDir(t);
  const logger = memoryLogger();
  const store = await openStore({ dataDir: dir, logger, watchMode: 'poll', pollIntervalMs: 100 });
  t.teardown(() => store.close());
  t.true(logger.lines.some((l) => l.msg === 'watching the data dir by polling every 100 ms'));
  const items = await store.collection<Item>({ name: 'items', schema: ItemSchema });
  const events: string[] = [];
  items.onChange((e) => events.push(`${e.type}:${e.id}:${e.source}`));
  await writeFile(path.join(dir, 'items', 'hand.yaml'), 'name: By hand\nvalue: 7\n');
  await waitFor(() => items.get('hand'), 1000);
  // an API write, then a hand edit of the same file: the edit wins, the write is not taken as one
  await items.update('hand', (c) => ({ ...c!.data, value: 8 }));
  await store.settle();
  await writeFile(path.join(dir, 'items', 'hand.yaml'), 'name: By hand\nvalue: 9\n');
  await waitFor(() => items.get('hand')?.data.value === 9, 1000);
  await items.updateMany(
    Array.from({ length: 50 }, (_, i) => ({ id: `bulk-${i}`, mutate: () => ({ name: `Bulk ${i}`, value: i }) })),
  );
  await writeFile(path.join(dir, 'items', 'bulk-7.yaml'), 'name: Edited\nvalue: 700\n');
  await waitFor(() => items.get('bulk-7')?.data.value === 700, 1000);
  await unlink(path.join(dir, 'items', 'hand.yaml'));
  await waitFor(() => !items.has('hand'), 1000);
  t.deepEqual(
    events.filter((e) => !e.startsWith('upsert:bulk-') || e === 'upsert:bulk-7:file'),
    ['upsert:hand:file', 'upsert:hand:api', 'upsert:hand:file', 'upsert:bulk-7:file', 'delete:hand:file'],
  );
  t.is(events.filter((e) => e.startsWith('upsert:bulk-') && e.endsWith(':api')).length, 50);
});
