import { mkdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { tempDir } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildApp, call } from './support.ts';

async function writeMiddleware(dataDir: string, file: string, text: string): Promise<string> {
  const dir = path.join(dataDir, 'middlewares');
  await mkdir(dir, { recursive: true });
  const full = path.join(dir, file);
  await writeFile(full, text);
  return full;
}

test('a middleware file written by hand appears via GET within 1 s, and its removal deletes it', async (t) => {
  const app = await buildApp(t);
  const file = await writeMiddleware(
    app.store.dataDir,
    'authelia.yaml',
    [
      '# hand-written',
      'name: Authelia',
      'type: forwardAuth',
      'description: SSO',
      'config:',
      '  address: http://authelia:9091/api/authz/forward-auth',
      '  trustForwardHeader: true',
      '  authResponseHeaders: [Remote-User, Remote-Groups]',
      'created_at: 2025-01-08T13:27:03.200Z',
      'updated_at: 2025-01-08T13:27:03.200Z',
      '',
    ].join('\n'),
  );
  const seen = await waitFor(async () => {
    const response = await call(app, { method: 'GET', url: '/api/middlewares/authelia' });
    return response.status === 200 ? response.body : null;
  }, 1000);
  t.like(seen, {
    id: 'authelia',
    name: 'Authelia',
    type: 'forwardAuth',
    description: 'SSO',
    created_at: '2025-01-08T13:27:03.200Z',
  });
  t.deepEqual(seen.config.authResponseHeaders, ['Remote-User', 'Remote-Groups']);

  await unlink(file);
  await waitFor(
    async () => (await call(app, { method: 'GET', url: '/api/middlewares/authelia' })).status === 404,
    5000,
  );
  t.pass();
});

test('an invalid hand-written middleware is ignored and listed in invalidFiles() with its line', async (t) => {
  const app = await buildApp(t);
  const unknownKey = await writeMiddleware(
    app.store.dataDir,
    'limit.yaml',
    'name: Limit\ntype: rateLimit\nconfig:\n  average: 10\n  averrage: 20\n',
  );
  const badChain = await writeMiddleware(
    app.store.dataDir,
    'chain.yaml',
    'name: Chain\ntype: chain\nconfig:\n  middlewares:\n    - limit\n    - ghost\n',
  );
  const badType = await writeMiddleware(app.store.dataDir, 'typo.yaml', 'name: Typo\ntype: forwardauth\nconfig: {}\n');
  const invalid = await waitFor(() => {
    const files = app.store.invalidFiles().filter((f) => [unknownKey, badChain, badType].includes(f.path));
    return files.length === 3 ? files : null;
  }, 5000);
  const byPath = new Map(invalid.map((f) => [f.path, f]));
  t.is(byPath.get(unknownKey)!.line, 5);
  t.regex(byPath.get(unknownKey)!.message, /averrage/);
  t.is(byPath.get(badChain)!.line, 6);
  t.regex(byPath.get(badChain)!.message, /ghost does not exist/);
  t.is(byPath.get(badType)!.line, 2);
  for (const id of ['limit', 'chain', 'typo'])
    t.is((await call(app, { method: 'GET', url: `/api/middlewares/${id}` })).status, 404);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/middlewares' })).body, []);

  // fixing the file brings it in, and it leaves the invalid list
  await writeMiddleware(app.store.dataDir, 'limit.yaml', 'name: Limit\ntype: rateLimit\nconfig:\n  average: 10\n');
  await waitFor(async () => (await call(app, { method: 'GET', url: '/api/middlewares/limit' })).status === 200, 5000);
  t.false(app.store.invalidFiles().some((f) => f.path === unknownKey));
});

test('a hand edit that breaks a valid middleware keeps the last valid version in effect', async (t) => {
  const app = await buildApp(t);
  t.is(
    (
      await call(app, {
        method: 'POST',
        url: '/api/middlewares',
        payload: { id: 'https', name: 'HTTPS', type: 'redirectScheme', config: { scheme: 'https' } },
      })
    ).status,
    201,
  );
  const file = await writeMiddleware(
    app.store.dataDir,
    'https.yaml',
    'name: HTTPS\ntype: redirectScheme\nconfig:\n  scheme: https\n  permanent: "yes"\n',
  );
  await waitFor(() => app.store.invalidFiles().some((f) => f.path === file), 5000);
  const current = await call(app, { method: 'GET', url: '/api/middlewares/https' });
  t.deepEqual(current.body.config, { scheme: 'https' });
});

test('a chain and its member added by hand together are both taken in', async (t) => {
  const app = await buildApp(t);
  // the chain's file comes first: its member is already on disk but not read yet
  await writeMiddleware(
    app.store.dataDir,
    'a-chain.yaml',
    'name: A chain\ntype: chain\nconfig:\n  middlewares: [z-headers]\n',
  );
  await writeMiddleware(
    app.store.dataDir,
    'z-headers.yaml',
    'name: Z headers\ntype: headers\nconfig:\n  frameDeny: true\n',
  );
  await waitFor(async () => (await call(app, { method: 'GET', url: '/api/middlewares' })).body.length === 2, 5000);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/middlewares/z-headers' })).body.used_by, [
    '/api/middlewares/a-chain',
  ]);
});

test('files present at startup load whatever their order: a chain may list a member read after it', async (t) => {
  const dataDir = path.join(await tempDir(t), 'data');
  await writeMiddleware(dataDir, 'a-chain.yaml', 'name: A chain\ntype: chain\nconfig:\n  middlewares: [z-headers]\n');
  await writeMiddleware(dataDir, 'z-headers.yaml', 'name: Z headers\ntype: headers\nconfig:\n  frameDeny: true\n');
  await writeMiddleware(dataDir, 'broken.yaml', 'name: Broken\ntype: chain\nconfig:\n  middlewares: [nowhere]\n');
  const app = await buildApp(t, { dataDir });
  t.deepEqual(
    (await call(app, { method: 'GET', url: '/api/middlewares' })).body.map((m: { id: string }) => m.id),
    ['a-chain', 'z-headers'],
  );
  t.true(
    app.store.invalidFiles().some((f) => f.path.endsWith('broken.yaml') && /nowhere does not exist/.test(f.message)),
  );
});
