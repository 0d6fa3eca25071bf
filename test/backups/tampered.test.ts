import test from 'ava';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  backupFiles,
  buildBackupApp,
  call,
  craftArchive,
  manifestFor,
  middleware,
  snapshot,
  sha256,
  type CraftEntry,
} from './support.ts';

const GOOD: CraftEntry[] = [
  { path: 'data/', type: 'Directory' },
  { path: 'data/middlewares/', type: 'Directory' },
  { path: 'data/middlewares/restored.yaml', data: 'name: Restored\ntype: rateLimit\nconfig:\n  average: 7\n' },
];
const manifestEntry = (manifest: unknown): CraftEntry => ({ path: 'manifest.json', data: JSON.stringify(manifest) });
const listed = (extra: CraftEntry[] = []) => [manifestEntry(manifestFor([...GOOD, ...extra])), ...GOOD, ...extra];

interface Case {
  name: string;
  entries: () => CraftEntry[];
  /** The entry the first detail must name. */
  entry: string;
  message: RegExp;
}

const CASES: Case[] = [
  {
    name: 'an entry with ..',
    entries: () => listed([{ path: 'data/../evil.yaml', data: 'x' }]),
    entry: 'data/../evil.yaml',
    message: /\.\./,
  },
  {
    name: 'an absolute path',
    entries: () => listed([{ path: '/tmp/evil.yaml', data: 'x' }]),
    entry: '/tmp/evil.yaml',
    message: /absolute/,
  },
  {
    name: 'a symbolic link',
    entries: () => [
      manifestEntry(manifestFor(GOOD)),
      ...GOOD,
      { path: 'data/middlewares/link.yaml', type: 'SymbolicLink', linkpath: '/etc/passwd' },
    ],
    entry: 'data/middlewares/link.yaml',
    message: /symbolic link/,
  },
  {
    name: 'a hard link',
    entries: () => [
      manifestEntry(manifestFor(GOOD)),
      ...GOOD,
      { path: 'data/hard.yaml', type: 'Link', linkpath: 'data/middlewares/restored.yaml' },
    ],
    entry: 'data/hard.yaml',
    message: /hard link/,
  },
  {
    name: 'a size that differs from the manifest',
    entries: () => {
      const manifest = manifestFor(GOOD);
      manifest.files[0].size += 1;
      return [manifestEntry(manifest), ...GOOD];
    },
    entry: 'data/middlewares/restored.yaml',
    message: /size/,
  },
  {
    name: 'a SHA-256 that differs from the manifest',
    entries: () => {
      const manifest = manifestFor(GOOD);
      manifest.files[0].sha256 = sha256('something else');
      return [manifestEntry(manifest), ...GOOD];
    },
    entry: 'data/middlewares/restored.yaml',
    message: /SHA-256/,
  },
  {
    name: 'an entry not in the manifest',
    entries: () => [
      manifestEntry(manifestFor(GOOD)),
      ...GOOD,
      { path: 'data/middlewares/sneaky.yaml', data: 'name: x' },
    ],
    entry: 'data/middlewares/sneaky.yaml',
    message: /not listed/,
  },
  {
    name: 'a listed file missing from the archive',
    entries: () => [manifestEntry(manifestFor([...GOOD, { path: 'data/gone.yaml', data: 'a: 1' }])), ...GOOD],
    entry: 'data/gone.yaml',
    message: /missing/,
  },
  { name: 'a missing manifest', entries: () => GOOD, entry: 'manifest.json', message: /missing/ },
  {
    name: 'a manifest that is not JSON',
    entries: () => [{ path: 'manifest.json', data: '{"format": 1,' }, ...GOOD],
    entry: 'manifest.json',
    message: /JSON/,
  },
  {
    name: 'a manifest of another format',
    entries: () => [manifestEntry({ ...manifestFor(GOOD), format: 2 }), ...GOOD],
    entry: 'manifest.json',
    message: /format/,
  },
  {
    name: 'an entry outside data/ and extra/',
    entries: () => listed([{ path: 'etc/cron.d/evil', data: 'x' }]),
    entry: 'etc/cron.d/evil',
    message: /outside/,
  },
  {
    name: 'an entry twice',
    entries: () => [...listed(), GOOD[2]],
    entry: 'data/middlewares/restored.yaml',
    message: /twice/,
  },
];

test('tampered archives answer 422 invalid_archive naming the entry, take no pre-restore backup and leave the data dir byte-identical', async (t) => {
  const { app, dataDir, backupDir, root } = await buildBackupApp(t);
  await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('current') });
  await mkdir(backupDir);
  const crafted: string[] = [];
  for (const [index, c] of CASES.entries()) {
    const id = `backup-20200101T0000${String(index).padStart(2, '0')}Z`;
    await craftArchive(path.join(backupDir, `${id}.tar.gz`), c.entries());
    crafted.push(`${id}.tar.gz`);
  }
  await app.store.settle();
  const before = await snapshot(dataDir);

  for (const [index, c] of CASES.entries()) {
    const id = `backup-20200101T0000${String(index).padStart(2, '0')}Z`;
    const response = await call(app, {
      method: 'POST',
      url: '/api/backup/restore',
      payload: { backup_id: id, restore_tokens: true },
    });
    t.is(response.status, 422, `${c.name}: ${JSON.stringify(response.body)}`);
    t.is(response.body.id, 'invalid_archive', c.name);
    t.is(response.body.details?.[0]?.path, c.entry, `${c.name}: ${JSON.stringify(response.body.details)}`);
    t.regex(response.body.details[0].message, c.message, c.name);
    t.true(response.body.message.includes(id), c.name);
  }
  t.deepEqual(await snapshot(dataDir), before);
  t.deepEqual(await backupFiles(backupDir), crafted, 'no pre-restore backup was taken');
  t.deepEqual((await readdir(root)).sort(), ['backups', 'data']);
  t.deepEqual(
    (await call(app, { method: 'GET', url: '/api/middlewares' })).body.map((m: { id: string }) => m.id),
    ['current'],
  );

  // control: the same crafting with nothing tampered restores
  await craftArchive(path.join(backupDir, 'backup-20200102T000000Z.tar.gz'), listed());
  const good = await call(app, {
    method: 'POST',
    url: '/api/backup/restore',
    payload: { backup_id: 'backup-20200102T000000Z' },
  });
  t.is(good.status, 200, JSON.stringify(good.body));
  t.deepEqual(
    (await call(app, { method: 'GET', url: '/api/middlewares' })).body.map((m: { id: string }) => m.id),
    ['restored'],
  );
});

test('archives that are not gzip, are truncated or exceed the limits answer 422 invalid_archive and change nothing', async (t) => {
  const { app, dataDir, backupDir } = await buildBackupApp(t, { backup: { max_restore_bytes: 4096 } });
  await call(app, { method: 'POST', url: '/api/middlewares', payload: middleware('current') });
  const real = (await call(app, { method: 'POST', url: '/api/backup/create' })).body;
  const bytes = await readFile(path.join(backupDir, real.file));
  const put = async (id: string, write: (file: string) => Promise<void>) => {
    await write(path.join(backupDir, `${id}.tar.gz`));
    return id;
  };
  const cases: [string, string, RegExp, string][] = [
    [
      await put('backup-20200101T000001Z', (f) => craftArchive(f, listed(), { gzip: false })),
      'plain tar',
      /not a gzip/,
      'backup-20200101T000001Z.tar.gz',
    ],
    [
      await put('backup-20200101T000002Z', (f) => writeFile(f, 'just some text, not an archive\n')),
      'text',
      /not a gzip/,
      'backup-20200101T000002Z.tar.gz',
    ],
    [
      await put('backup-20200101T000003Z', (f) => writeFile(f, bytes.subarray(0, Math.floor(bytes.length / 2)))),
      'truncated',
      /not a readable/,
      'backup-20200101T000003Z.tar.gz',
    ],
    [
      await put('backup-20200101T000004Z', (f) =>
        craftArchive(f, listed([{ path: 'data/big.bin', data: 'x'.repeat(5000) }])),
      ),
      'over max_restore_bytes',
      /max_restore_bytes/,
      'data/big.bin',
    ],
    [
      await put('backup-20200101T000005Z', (f) =>
        craftArchive(f, [
          manifestEntry(manifestFor(GOOD)),
          ...GOOD,
          ...Array.from({ length: 10_000 }, (_, i) => ({ path: `data/d${i}/`, type: 'Directory' as const })),
        ]),
      ),
      'over 10000 entries',
      /10000 entries/,
      'data/d9996/',
    ],
  ];
  await app.store.settle();
  const before = await snapshot(dataDir);
  const files = await backupFiles(backupDir);
  for (const [id, what, message, entry] of cases) {
    const response = await call(app, { method: 'POST', url: '/api/backup/restore', payload: { backup_id: id } });
    t.is(response.status, 422, `${what}: ${JSON.stringify(response.body)}`);
    t.is(response.body.id, 'invalid_archive', what);
    t.is(response.body.details[0].path, entry, what);
    t.regex(response.body.details[0].message, message, what);
  }
  t.deepEqual(await snapshot(dataDir), before);
  t.deepEqual(await backupFiles(backupDir), files);
  // archives whose manifest cannot be read are still listed (and can be deleted)
  const listedIds = (await call(app, { method: 'GET', url: '/api/backup/list' })).body;
  t.like(
    listedIds.find((b: { id: string }) => b.id === 'backup-20200101T000002Z'),
    { kind: 'manual', created_at: '2020-01-01T00:00:02.000Z', files: 0, app_version: 'unknown' },
  );
});
