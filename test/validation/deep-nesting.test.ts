/**
 * Nesting limit (API.md §2.10): a body with more than 64 levels of arrays/objects is a 422
 * `validation_failed` naming the path where the limit was passed, before anything walks it (handlers
 * recurse: a 2,000-level `config.average` was a 500 "Maximum call stack size exceeded"). Every write
 * route of the OpenAPI document gets 2,000-level arrays and objects at the body root and in each body
 * field, over a real socket; nothing may be written and the server must answer afterwards.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { build } from '../helpers/build.ts';
import { bodyWith, listen, snapshot as snapshotOf, writeOperations } from '../helpers/openapi-operations.ts';
import { waitFor } from '../helpers/wait.ts';
import { mmDatabase } from '../import/mm-db.ts';
import { harness } from '../resources/support.ts';

const DEEP = 2000;
const deepArray = (levels: number, inner = '1'): string => '['.repeat(levels) + inner + ']'.repeat(levels);
const deepObject = (levels: number, inner = '1'): string => '{"k":'.repeat(levels) + inner + '}'.repeat(levels);

/** Routes whose scope reads no body at all (its parser discards it): nothing to nest, nothing to refuse. */
const BODY_IGNORED = new Set(['/api/mtls/verify']);
/** Files every request may append to (API.md §2.11), so not "written" in the sense of this test. */
const APPEND_ONLY = new Set(['audit.log']);

async function send(base: string, method: string, url: string, body?: string) {
  const headers = body === undefined ? undefined : { 'content-type': 'application/json' };
  const response = await fetch(base + url, { method, headers, body });
  return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, unknown> };
}

/** Every file under the data dir with its hash, append-only logs left out. */
const snapshot = (dir: string) => snapshotOf(dir, APPEND_ONLY);

const segmentsOf = (pointer: string): string[] => pointer.split('/').slice(1);

test('every write route answers 422 naming the path to a 2,000-level body, writes nothing and keeps serving', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  const operations = await writeOperations(app, BODY_IGNORED, 'deep-probe');
  t.true(operations.length >= 40, `only ${operations.length} write operations in the OpenAPI document`);
  const before = await snapshot(app.store.dataDir);

  const failures: string[] = [];
  let requests = 0;
  for (const operation of operations)
    for (const pointer of ['', ...operation.fields])
      for (const [shape, inner] of [
        ['array', deepArray(DEEP)],
        ['object', deepObject(DEEP)],
      ] as const) {
        requests += 1;
        const res = await send(base, operation.method, operation.url, bodyWith(pointer, inner));
        const detail = (res.body?.details as Array<{ path: string; message: string }> | undefined)?.[0];
        // the container that passed the limit is the 65th level: its pointer has 64 segments
        const expected = segmentsOf(pointer).concat(
          Array(64 - segmentsOf(pointer).length).fill(shape === 'array' ? '0' : 'k'),
        );
        if (
          res.status !== 422 ||
          res.body?.id !== 'validation_failed' ||
          detail?.path !== `/${expected.join('/')}` ||
          !/nests deeper than 64 levels/.test(detail.message)
        )
          failures.push(
            `${operation.method} ${operation.url} ${shape} at '${pointer}': ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
          );
      }
  t.deepEqual(failures, [], `${failures.length} of ${requests} deep bodies not refused as nesting`);
  t.true(requests > 200);

  t.deepEqual(await snapshot(app.store.dataDir), before, 'a refused body wrote to the data dir');
  t.is((await fetch(`${base}/api/health`)).status, 200);
  const created = await send(
    base,
    'POST',
    '/api/middlewares',
    JSON.stringify({ name: 'after deep bodies', type: 'rateLimit', config: { average: 10, burst: 20 } }),
  );
  t.is(created.status, 201, JSON.stringify(created.body));
});

test('the deep bodies of issue 24 (rateLimit config.average, service config.servers) are 422, not 500', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  const cases = [
    [
      '/api/middlewares',
      `{"name":"x","type":"rateLimit","config":{"average":${deepArray(DEEP)},"burst":1}}`,
      '/config/average',
    ],
    ['/api/services', `{"name":"s","type":"loadBalancer","config":{"servers":${deepArray(DEEP)}}}`, '/config/servers'],
    [
      '/api/services',
      `{"name":"s","type":"loadBalancer","config":{"servers":[{"url":${deepObject(DEEP)}}]}}`,
      '/config/servers/0/url',
    ],
  ] as const;
  for (const [url, body, prefix] of cases) {
    const res = await send(base, 'POST', url, body);
    t.is(res.status, 422, `${url}: ${JSON.stringify(res.body)}`);
    const detail = (res.body.details as Array<{ path: string }>)[0];
    t.true(detail.path.startsWith(`${prefix}/`), detail.path);
    t.is(segmentsOf(detail.path).length, 64, detail.path);
    t.regex(String(res.body.message), /nests deeper than 64 levels of arrays\/objects/);
  }
  t.is((await fetch(`${base}/api/health`)).status, 200);
});

test('64 levels pass the parser and are stored; 65 are refused at the 65th', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  // the root object is level 1, config 2, the plugin key's object 3 … the innermost `levels`
  const body = (levels: number) =>
    `{"name":"deep plugin","type":"plugin","config":{"deepPlugin":${deepObject(levels - 2, '"leaf"')}}}`;
  const accepted = await send(base, 'POST', '/api/middlewares', body(64));
  t.is(accepted.status, 201, JSON.stringify(accepted.body).slice(0, 300));
  const id = String(accepted.body.id);
  const read = await send(base, 'GET', `/api/middlewares/${id}`);
  let value: unknown = (read.body.config as Record<string, unknown>).deepPlugin;
  for (let level = 3; level <= 64; level++) value = (value as Record<string, unknown>).k;
  t.is(value, 'leaf', 'the stored middleware keeps all 64 levels');

  const refused = await send(base, 'POST', '/api/middlewares', body(65));
  t.is(refused.status, 422);
  t.is(
    (refused.body.details as Array<{ path: string }>)[0].path,
    `/config/deepPlugin/${Array(62).fill('k').join('/')}`,
  );
});

test('a hand-edited data file 2,000 levels deep is an invalid edit naming the path; the watcher goes on', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  const dir = path.join(app.store.dataDir, 'middlewares');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'deep.yaml');
  const header = 'name: Deep\ntype: plugin\nconfig:\n  deepPlugin: ';
  await writeFile(file, header + '{k: '.repeat(DEEP) + '1' + '}'.repeat(DEEP) + '\n');
  const invalid = await waitFor(() => app.store.invalidFiles().find((f) => f.path === file), 1000);
  t.regex(invalid.message, /^config\/deepPlugin(\/k){62} nests deeper than 64 levels of mappings\/sequences$/);
  t.is(invalid.line, 4);
  t.is((await fetch(`${base}/api/middlewares/deep`)).status, 404);

  // the same file fixed by hand is served: the watcher survived the deep one
  await writeFile(file, header + '{k: 1}\n');
  const served = await waitFor(async () => {
    const res = await send(base, 'GET', '/api/middlewares/deep');
    return res.status === 200 ? res.body : null;
  }, 1000);
  t.deepEqual(served.config, { deepPlugin: { k: 1 } });
  t.is((await fetch(`${base}/api/health`)).status, 200);
});

test('a middleware-manager database holding 2,000-level JSON is imported without it: each deep value skipped naming its path', async (t) => {
  // the body is a SQLite file, so the JSON parser's check never sees the JSON in its columns: the
  // import parses it and must refuse it before the owning groups' recursive checks walk it (was 500)
  const { app, dataDir } = await harness(t);
  const base = await listen(app);
  const bytes = await mmDatabase({
    middlewares: [
      { id: 'deep-array', name: 'Deep array', type: 'rateLimit', config: `{"average":${deepArray(DEEP)},"burst":1}` },
      {
        id: 'deep-object',
        name: 'Deep object',
        type: 'headers',
        config: `{"customRequestHeaders":${deepObject(DEEP)}}`,
      },
      { id: 'shallow', name: 'Shallow', type: 'rateLimit', config: { average: 10, burst: 20 } },
    ],
    services: [
      { id: 'deep-service', name: 'Deep service', type: 'loadBalancer', config: `{"servers":${deepArray(DEEP)}}` },
    ],
    resources: [
      {
        id: '1-Nextcloud-router',
        host: 'cloud.example.com',
        custom_headers: deepObject(DEEP),
        mtls_rules: deepArray(DEEP),
      },
    ],
  });
  const before = await snapshot(dataDir);
  const importDb = (query: string) =>
    fetch(`${base}/api/import/middleware-manager${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
    });
  const reasons = (body: { skipped: Array<{ kind: string; name: string; reason: string }> }) =>
    Object.fromEntries(body.skipped.map((s) => [`${s.kind} ${s.name}`, s.reason]));
  // the container past the limit is at level 65: its pointer has 64 segments
  const at = (head: string[], segment: string) =>
    `at /${head.concat(Array(64 - head.length).fill(segment)).join('/')} nests deeper than 64 levels of arrays/objects`;
  const expected = {
    'middleware Deep array': `config ${at(['average'], '0')}`,
    'middleware Deep object': `config ${at(['customRequestHeaders'], 'k')}`,
    'service Deep service': `config ${at(['servers'], '0')}`,
    'override 1-nextcloud-router headers': `custom_headers ${at([], 'k')}`,
    'override 1-nextcloud-router mtlswhitelist': `mtls_rules ${at([], '0')}`,
  };

  const dry = await importDb('?dry_run=true');
  t.is(dry.status, 200);
  const dryBody = await dry.json();
  t.like(reasons(dryBody), expected);
  t.deepEqual(await snapshot(dataDir), before, 'a dry run wrote to the data dir');

  const run = await importDb('');
  t.is(run.status, 200);
  const runBody = await run.json();
  t.like(reasons(runBody), expected);
  t.deepEqual(
    runBody.created.middlewares.map((m: { id: string }) => m.id),
    ['shallow'],
  );
  t.deepEqual(runBody.created.services, []);
  t.deepEqual(await readdir(path.join(dataDir, 'middlewares')), ['shallow.yaml']);
  t.is((await fetch(`${base}/api/health`)).status, 200);
});
