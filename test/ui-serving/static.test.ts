import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { PROJECT_ROOT } from '../../core/config/load.ts';
import { uiDirectory } from '../../plugins/ui/location.ts';

const INDEX = '<!doctype html><title>Stack Manager</title><div id="app"></div>';

/** A built UI as Vite leaves it: index.html, hashed assets, a manifest in a dot dir, a file beside the dir. */
async function fakeUi(t: ExecutionContext): Promise<string> {
  const root = await tempDir(t, 'sm-ui-');
  const dir = path.join(root, 'dist');
  await mkdir(path.join(dir, 'assets'), { recursive: true });
  await mkdir(path.join(dir, '.vite'), { recursive: true });
  await writeFile(path.join(dir, 'index.html'), INDEX);
  await writeFile(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log("app")');
  await writeFile(path.join(dir, 'assets', 'index-AbC123.css'), 'body{}');
  await writeFile(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(path.join(dir, '.vite', 'manifest.json'), '{}');
  await writeFile(path.join(root, 'secret.txt'), 'outside the UI dir');
  return dir;
}

async function app(t: ExecutionContext, config: Record<string, unknown>): Promise<FastifyInstance> {
  return build(t, { config: { auth: { mode: 'all' }, ...config } });
}

test('GET / serves index.html with no-cache, without a token in auth mode all', async (t) => {
  const server = await app(t, { ui: { enabled: true, dir: await fakeUi(t) } });
  const response = await server.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
  t.is(response.statusCode, 200);
  t.regex(String(response.headers['content-type']), /^text\/html/);
  t.is(response.headers['cache-control'], 'no-cache');
  t.is(response.body, INDEX);
  t.truthy(response.headers.etag);
});

test('hashed assets are served with immutable caching and their content type', async (t) => {
  const server = await app(t, { ui: { enabled: true, dir: await fakeUi(t) } });
  const js = await server.inject({ method: 'GET', url: '/assets/index-AbC123.js' });
  t.is(js.statusCode, 200);
  t.regex(String(js.headers['content-type']), /javascript/);
  t.is(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.is(js.body, 'console.log("app")');
  const css = await server.inject({ method: 'GET', url: '/assets/index-AbC123.css' });
  t.regex(String(css.headers['content-type']), /^text\/css/);
  const icon = await server.inject({ method: 'GET', url: '/favicon.svg' });
  t.is(icon.statusCode, 200);
  t.is(icon.headers['cache-control'], 'no-cache');
});

test('paths without an extension fall back to index.html (SPA); missing files with one answer the JSON 404', async (t) => {
  const server = await app(t, { ui: { enabled: true, dir: await fakeUi(t) } });
  for (const url of ['/resources', '/resources/web-app', '/settings/tokens?tab=1', '/assets']) {
    const response = await server.inject({ method: 'GET', url });
    t.is(response.statusCode, 200, url);
    t.is(response.body, INDEX, url);
    t.is(response.headers['cache-control'], 'no-cache', url);
  }
  const missing = await server.inject({ method: 'GET', url: '/assets/gone-123.js' });
  t.is(missing.statusCode, 404);
  t.is(missing.json().id, 'not_found');
});

test('unknown /api paths stay JSON 404 for every method; known ones keep 405', async (t) => {
  const server = await app(t, { auth: { mode: 'off' }, ui: { enabled: true, dir: await fakeUi(t) } });
  for (const [method, url] of [
    ['GET', '/api/nope'],
    ['GET', '/api'],
    ['POST', '/api/nope'],
    ['HEAD', '/api/nope/deeper'],
    ['DELETE', '/api/nope'],
  ] as const) {
    const response = await server.inject({ method, url });
    t.is(response.statusCode, 404, `${method} ${url}`);
    if (method !== 'HEAD') t.is(response.json().id, 'not_found');
  }
  const wrongMethod = await server.inject({ method: 'PATCH', url: '/api/health' });
  t.is(wrongMethod.statusCode, 405);
  // routes under /api keep winning over the catch-all: Swagger UI's own static files too
  const docs = await server.inject({ method: 'GET', url: '/api/docs/' });
  t.is(docs.statusCode, 200);
  t.not(docs.body, INDEX);
  t.is((await server.inject({ method: 'GET', url: '/api/health' })).json().status, 'ok');
});

test('HEAD works on files and on the SPA fallback', async (t) => {
  const server = await app(t, { ui: { enabled: true, dir: await fakeUi(t) } });
  const head = await server.inject({ method: 'HEAD', url: '/assets/index-AbC123.js' });
  t.is(head.statusCode, 200);
  t.is(head.body, '');
  t.is(head.headers['content-length'], String('console.log("app")'.length));
  const spa = await server.inject({ method: 'HEAD', url: '/dashboard' });
  t.is(spa.statusCode, 200);
  t.is(spa.headers['content-length'], String(INDEX.length));
});

test('a conditional GET with the ETag answers 304', async (t) => {
  const server = await app(t, { ui: { enabled: true, dir: await fakeUi(t) } });
  const first = await server.inject({ method: 'GET', url: '/' });
  const again = await server.inject({
    method: 'GET',
    url: '/',
    headers: { 'if-none-match': String(first.headers.etag) },
  });
  t.is(again.statusCode, 304);
});

/** Raw request over a real socket: inject and clients normalise `..` away before it is sent. */
function rawGet(port: number, rawPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: rawPath, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

test('path traversal, plain or encoded, never leaves the UI directory; dotfiles are not served', async (t) => {
  const server = await app(t, { ui: { enabled: true, dir: await fakeUi(t) } });
  await server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = server.server.address() as { port: number };
  const attempts = [
    '/../secret.txt',
    '/assets/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/..%2fsecret.txt',
    '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '/..%5csecret.txt',
    '/.vite/manifest.json',
    '/%2evite/manifest.json',
    '/index.html%00.js',
  ];
  for (const attempt of attempts) {
    const response = await rawGet(port, attempt);
    t.false(response.body.includes('outside the UI dir'), attempt);
    t.false(response.body.includes('root:'), attempt);
    t.false(response.body === '{}', `${attempt} served the manifest`);
    t.true(
      response.status === 404 || response.status === 400 || (response.status === 200 && response.body === INDEX),
      `${attempt} → ${response.status}`,
    );
  }
});

test('ui.enabled false: non-/api GETs answer the JSON 404', async (t) => {
  const server = await app(t, { ui: { enabled: false, dir: await fakeUi(t) } });
  for (const url of ['/', '/index.html', '/resources']) {
    const response = await server.inject({ method: 'GET', url });
    t.is(response.statusCode, 404, url);
    t.is(response.json().id, 'not_found', url);
  }
});

test('a ui.dir without index.html answers a 404 that says so', async (t) => {
  const empty = await tempDir(t, 'sm-ui-empty-');
  const server = await app(t, { ui: { enabled: true, dir: empty } });
  const response = await server.inject({ method: 'GET', url: '/' });
  t.is(response.statusCode, 404);
  t.is(response.json().id, 'not_found');
  t.regex(response.json().message, /holds no index\.html/);
});

test('the built-in UI directory is ui/dist of the project root (where package.json and config/ are)', (t) => {
  t.is(PROJECT_ROOT, path.resolve(import.meta.dirname, '..', '..'));
  t.deepEqual(uiDirectory(''), { dir: path.join(PROJECT_ROOT, 'ui', 'dist'), builtIn: true });
  t.deepEqual(uiDirectory('relative/ui'), { dir: path.resolve('relative/ui'), builtIn: false });
});

test('without ui.dir the built-in ui/dist is served, or a 404 says how to build it', async (t) => {
  const server = await app(t, { ui: { enabled: true, dir: '' } });
  const response = await server.inject({ method: 'GET', url: '/' });
  if (existsSync(path.join(PROJECT_ROOT, 'ui', 'dist', 'index.html'))) {
    t.is(response.statusCode, 200);
    t.regex(String(response.headers['content-type']), /^text\/html/);
  } else {
    t.is(response.statusCode, 404);
    t.is(response.json().id, 'not_found');
    t.regex(response.json().message, /not built: run `npm run build:ui`/);
  }
});

test('the UI routes stay out of the OpenAPI document', async (t) => {
  const server = await app(t, { auth: { mode: 'off' }, ui: { enabled: true, dir: await fakeUi(t) } });
  const document = (await server.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  t.false(Object.keys(document.paths).some((p) => p === '/*' || p === '/{*}'));
  t.truthy(document.paths['/api/events']);
});

test('UI_ENABLED and UI_DIR come from the environment; a non-boolean UI_ENABLED is a config error naming the key', async (t) => {
  const { loadConfig, ConfigError } = await import('../../core/config/load.ts');
  const env = { CONFIG_FILE: path.join(import.meta.dirname, '..', 'helpers', 'empty.yaml') };
  const defaults = loadConfig({ env });
  t.true(defaults.ui.enabled);
  t.is(defaults.ui.dir, '');
  t.deepEqual(defaults.events, { heartbeat_ms: 15000, replay_size: 1000, max_pending_bytes: 1048576 });
  const set = loadConfig({ env: { ...env, UI_ENABLED: 'false', UI_DIR: '/srv/ui' } });
  t.false(set.ui.enabled);
  t.is(set.ui.dir, '/srv/ui');
  const error = t.throws(() => loadConfig({ env: { ...env, UI_ENABLED: 'maybe' } }));
  t.true(error instanceof ConfigError);
  t.regex(error!.message, /ui\.enabled/);
});
