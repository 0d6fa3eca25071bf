/**
 * POST/DELETE /api/plugins/:key/vendor (API.md §4.20): a plugin's zip, downloaded from a loopback
 * stand-in of Traefik's plugin registry or uploaded, is checked, unpacked into plugins_local_dir
 * and its entry moved to experimental.localPlugins; malformed archives change nothing.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { parse } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { zipEntries, zipSource } from '../helpers/zip.ts';
import { assertError, call, deadUrl, pluginsApp } from './support.ts';

const MODULE = 'github.com/stack-manager-e2e/plugin-stamp';
const VERSION = 'v0.1.0';
const SOURCE = path.resolve(import.meta.dirname, '..', 'fixtures', 'traefik-plugins', 'stamp');

const STATIC = `# Traefik static configuration
entryPoints:
  web:
    address: ":80"
experimental:
  # plugins load at startup only
  plugins:
    badger:
      moduleName: github.com/fosrl/badger
      version: v1.2.0
    # stamps requests
    stamp: # the stamp plugin
      moduleName: ${MODULE}
      version: ${VERSION}
`;

interface Registry {
  url: string;
  requests: string[];
  zip: Buffer;
}

/** Traefik's registry download endpoint on 127.0.0.1 serving the stamp plugin's zip. */
async function startRegistry(t: ExecutionContext): Promise<Registry> {
  const zip = await zipSource(SOURCE, `plugin-stamp-${VERSION.slice(1)}`);
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === `/public/download/${MODULE}/${VERSION}`)
      response.writeHead(200, { 'content-type': 'application/zip' }).end(zip);
    else response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, zip };
}

async function setup(t: ExecutionContext, options: { registryUrl?: string; localDir?: string | null } = {}) {
  const localDir = options.localDir === null ? '' : (options.localDir ?? (await tempDir(t, 'sm-plugins-local-')));
  const { app, file } = await pluginsApp(t, {
    text: STATIC,
    config: {
      proxy: { plugins_local_dir: localDir },
      plugins_registry: { url: options.registryUrl ?? (await deadUrl()) },
    },
  });
  const put = await call(app, { method: 'PUT', url: '/api/plugins/configpath', payload: { path: file } });
  t.is(put.status, 200, JSON.stringify(put.body));
  return { app, file, localDir, target: path.join(localDir, 'src', ...MODULE.split('/')) };
}

const upload = (zip: Buffer) => ({
  method: 'POST' as const,
  url: '/api/plugins/stamp/vendor',
  headers: { 'content-type': 'application/zip' },
  payload: zip,
});

test('POST /api/plugins/:key/vendor downloads the plugin from the registry, unpacks it and moves the entry to localPlugins', async (t) => {
  const registry = await startRegistry(t);
  const { app, file, target } = await setup(t, { registryUrl: registry.url });
  const response = await call(app, { method: 'POST', url: '/api/plugins/stamp/vendor' });
  t.is(response.status, 200, JSON.stringify(response.body));
  const sha256 = createHash('sha256').update(registry.zip).digest('hex');
  t.deepEqual(response.body, {
    key: 'stamp',
    module_name: MODULE,
    version: VERSION,
    local: true,
    path: target,
    sha256,
    restart_required: ['traefik'],
  });
  t.is(response.headers['x-restart-required'], 'true');
  t.deepEqual(registry.requests, [`/public/download/${MODULE}/${VERSION}`]);
  // the files, without the archive's top folder, byte for byte
  t.deepEqual((await readdir(target)).sort(), ['.traefik.yml', 'go.mod', 'stamp.go']);
  for (const name of ['.traefik.yml', 'go.mod', 'stamp.go'])
    t.deepEqual(await readFile(path.join(target, name)), await readFile(path.join(SOURCE, name)), name);
  t.deepEqual(await readdir(path.dirname(target)), ['plugin-stamp'], 'no temp dir left beside it');
  // the static config: the entry moved with its comments, the rest untouched, the old bytes in .bak
  const text = await readFile(file, 'utf8');
  const written = parse(text);
  t.deepEqual(written.experimental.localPlugins, { stamp: { moduleName: MODULE } });
  t.deepEqual(Object.keys(written.experimental.plugins), ['badger']);
  t.regex(text, /# plugins load at startup only/);
  t.regex(text, /# stamps requests\n\s+stamp:\n\s+# the stamp plugin\n/);
  t.true(text.startsWith('# Traefik static configuration\nentryPoints:'));
  t.is(await readFile(`${file}.bak`, 'utf8'), STATIC);
  // the Plugin object says it is vendored
  const list = await call(app, { method: 'GET', url: '/api/plugins' });
  const stamp = list.body.find((p: { key: string }) => p.key === 'stamp');
  t.like(stamp, { local: true, module_name: MODULE, vendored: { version: VERSION, sha256 } });
  t.is(list.body.find((p: { key: string }) => p.key === 'badger').vendored, null);
});

test('DELETE /api/plugins/:key/vendor puts the entry back in experimental.plugins with the vendored version', async (t) => {
  const registry = await startRegistry(t);
  const { app, file, target } = await setup(t, { registryUrl: registry.url });
  t.is((await call(app, { method: 'POST', url: '/api/plugins/stamp/vendor' })).status, 200);
  const removed = await call(app, { method: 'DELETE', url: '/api/plugins/stamp/vendor' });
  t.is(removed.status, 200, JSON.stringify(removed.body));
  t.like(removed.body, { key: 'stamp', module_name: MODULE, version: VERSION });
  const text = await readFile(file, 'utf8');
  const written = parse(text);
  t.deepEqual(written.experimental.plugins.stamp, { moduleName: MODULE, version: VERSION });
  t.is(written.experimental.localPlugins, undefined);
  t.regex(text, /# stamps requests\n\s+stamp:\n\s+# the stamp plugin\n/);
  await t.throwsAsync(readdir(target), { code: 'ENOENT' });
  const list = await call(app, { method: 'GET', url: '/api/plugins' });
  t.like(
    list.body.find((p: { key: string }) => p.key === 'stamp'),
    { local: false, version: VERSION, vendored: null },
  );
  assertError(t, await call(app, { method: 'DELETE', url: '/api/plugins/stamp/vendor' }), 404, 'not_found');
});

const TOP = 'plugin-stamp-0.1.0';
const manifest = (module = MODULE) => ({ name: `${TOP}/.traefik.yml`, data: `import: ${module}\ntype: middleware\n` });
const MALFORMED: Array<{ what: string; zip: () => Buffer; cause: RegExp }> = [
  {
    what: 'a ../ entry',
    zip: () => zipEntries([manifest(), { name: `${TOP}/../../evil.go`, data: 'x' }]),
    cause: /relative path|leaves/,
  },
  {
    what: 'an absolute path',
    zip: () => zipEntries([{ name: '/etc/evil', data: 'x' }, manifest()]),
    cause: /absolute path/,
  },
  {
    what: 'a symbolic link',
    zip: () => zipEntries([manifest(), { name: `${TOP}/link`, data: '/etc/passwd', mode: 0o120777 }]),
    cause: /symbolic link/,
  },
  {
    what: 'more than 5,000 entries',
    zip: () =>
      zipEntries([manifest(), ...Array.from({ length: 5_000 }, (_, i) => ({ name: `${TOP}/f${i}.go`, data: '' }))]),
    cause: /5001 entries, more than 5000/,
  },
  {
    what: 'more than 50 MiB unpacked',
    zip: () =>
      zipEntries([manifest(), { name: `${TOP}/big.bin`, data: Buffer.alloc(51 * 1024 * 1024), deflate: true }]),
    cause: /more than 50 MiB/,
  },
  {
    what: 'no .traefik.yml',
    zip: () => zipEntries([{ name: `${TOP}/stamp.go`, data: 'package stamp\n' }]),
    cause: /no \.traefik\.yml/,
  },
  {
    what: 'a .traefik.yml importing another module',
    zip: () => zipEntries([manifest('github.com/someone/else')]),
    cause: /imports github\.com\/someone\/else, not github\.com\/stack-manager-e2e\/plugin-stamp/,
  },
  {
    // measured before the composer recurses (API.md §2.10), not a "Maximum call stack size exceeded"
    what: 'a .traefik.yml nested 3,000 levels',
    zip: () =>
      zipEntries([
        { name: `${TOP}/.traefik.yml`, data: `import: ${MODULE}\nx: ${'{a: '.repeat(3000)}1${'}'.repeat(3000)}\n` },
      ]),
    cause:
      /^plugin archive refused: \.traefik\.yml is not valid YAML: x(\/a){63} nests deeper than 64 levels of mappings\/sequences$/,
  },
  { what: 'not a zip', zip: () => Buffer.from('PK but not really a zip file'), cause: /not a readable zip/ },
];

test('malformed archives answer 422 invalid_archive naming the cause and leave the files and the static config as they were', async (t) => {
  const { app, file, target } = await setup(t);
  for (const bad of MALFORMED) {
    const response = await call(app, upload(bad.zip()));
    const body = assertError(t, response, 422, 'invalid_archive');
    t.regex(body.message, bad.cause, bad.what);
    t.is(await readFile(file, 'utf8'), STATIC, bad.what);
    await t.throwsAsync(readdir(target), { code: 'ENOENT' }, bad.what);
  }
  t.deepEqual(await readdir(path.join(path.dirname(target))), [], 'no temp dir left');
});

test('an uploaded zip is vendored; a failed vendoring afterwards leaves the vendored copy as it was', async (t) => {
  const { app, file, target } = await setup(t);
  const zip = await zipSource(SOURCE, TOP);
  const first = await call(app, upload(zip));
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.body.sha256, createHash('sha256').update(zip).digest('hex'));
  const text = await readFile(file, 'utf8');
  // a second vendoring of the key with a bad archive: 422, the first copy and the file stay
  assertError(t, await call(app, upload(zipEntries([manifest('github.com/someone/else')]))), 422, 'invalid_archive');
  t.deepEqual((await readdir(target)).sort(), ['.traefik.yml', 'go.mod', 'stamp.go']);
  t.is(await readFile(file, 'utf8'), text);
  // a good one replaces the copy (a changed file shows the swap)
  await writeFile(path.join(target, 'stamp.go'), 'changed by hand');
  t.is((await call(app, upload(zip))).status, 200);
  t.deepEqual(await readFile(path.join(target, 'stamp.go')), await readFile(path.join(SOURCE, 'stamp.go')));
  t.deepEqual(await readdir(path.dirname(target)), ['plugin-stamp']);
});

test('vendoring answers 502 when the registry is down or lacks the version, 503 without plugins_local_dir, 404 for an unknown key', async (t) => {
  const down = await setup(t);
  const refused = assertError(
    t,
    await call(down.app, { method: 'POST', url: '/api/plugins/stamp/vendor' }),
    502,
    'upstream_unavailable',
  );
  t.regex(refused.message, /ECONNREFUSED/);
  t.is(await readFile(down.file, 'utf8'), STATIC);

  const registry = await startRegistry(t);
  const missing = await setup(t, { registryUrl: registry.url });
  const edited = STATIC.replace(`version: ${VERSION}`, 'version: v9.9.9');
  await writeFile(missing.file, edited);
  const notThere = assertError(
    t,
    await call(missing.app, { method: 'POST', url: '/api/plugins/stamp/vendor' }),
    502,
    'upstream_unavailable',
  );
  t.regex(notThere.message, /answered 404/);
  assertError(t, await call(missing.app, { method: 'POST', url: '/api/plugins/nope/vendor' }), 404, 'not_found');

  const off = await setup(t, { registryUrl: registry.url, localDir: null });
  assertError(t, await call(off.app, { method: 'POST', url: '/api/plugins/stamp/vendor' }), 503, 'not_configured');
  t.is(await readFile(off.file, 'utf8'), STATIC);
  t.deepEqual(registry.requests, [`/public/download/${MODULE}/v9.9.9`]);
});

test('an upload over 20 MiB answers 413 and a plugins_local_dir that cannot be written answers 409', async (t) => {
  const { app, file } = await setup(t);
  const big = await call(app, upload(Buffer.alloc(20 * 1024 * 1024 + 1)));
  t.is(big.status, 413, JSON.stringify(big.body));
  const blocker = path.join(await tempDir(t, 'sm-plugins-blocked-'), 'file');
  await writeFile(blocker, 'not a dir');
  const blocked = await setup(t, { localDir: blocker });
  await mkdir(path.dirname(blocked.target), { recursive: true }).catch(() => undefined);
  assertError(t, await call(blocked.app, upload(await zipSource(SOURCE, TOP))), 409, 'conflict');
  t.is(await readFile(blocked.file, 'utf8'), STATIC);
  t.is(await readFile(file, 'utf8'), STATIC);
});
