/**
 * Bad input never gives a 5xx and never loses or corrupts data (API.md §2, issue 24): every write
 * route (POST/PUT/PATCH/DELETE) of the app's own OpenAPI document gets ~20 mutated requests over a real
 * socket, auth off, from a fixed seed: wrong JSON types per field, an empty object, top-level
 * array/string/number/null, a 1 MB string, NUL, a lone surrogate ("\ud800"), RTL/emoji, `__proto__` /
 * `constructor` / `prototype` keys, duplicate keys, invalid UTF-8 bytes, a wrong content-type, an empty
 * JSON body, path params `..` / `%2e%2e` / 300 chars / unicode, and repeated query values (?x=1&x=2).
 * Each answer is < 500 and, when ≥ 400, JSON {id, message}; afterwards /api/health is 200, no data file
 * is invalid and nothing was logged at error level.
 *
 * Skips (what cannot run here): on the routes of EXTERNAL_WORK (containers, backups restore, static
 * apply, history restore, plugin install/vendor, datasource/notification tests) only bodies that
 * cannot be valid are sent (wrong types, wrong shapes, bad bytes), never the schema's plausible body
 * with odd strings, so no request reaches Docker, the network or a restore; they must be refused first.
 * Left out: POST /api/proxy-config/invalidate (it reads no input; its answer is Pangolin's, 502 here
 * where there is none). A Traefik static config file and a plugins-local dir are set up so the static
 * and plugins routes judge the input instead of answering 503 not_configured.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import test from 'ava';
import { build, tempDir } from '../helpers/build.ts';
import {
  EXTERNAL_WORK,
  listen,
  sampleOf,
  writeOperations,
  type Operation,
  type Schema,
} from '../helpers/openapi-operations.ts';
import { seededRandom } from '../helpers/random.ts';

interface Probe {
  what: string;
  url: string;
  body?: string | Buffer;
  contentType?: string;
}

const NO_INPUT = new Set(['/api/proxy-config/invalidate']);

const WRONG_TYPES = [
  ['string', '"text"'],
  ['number', '42'],
  ['boolean', 'true'],
  ['null', 'null'],
  ['array', '[1,"a"]'],
  ['object', '{"k":1}'],
] as const;

/** The JSON types a field's schema admits (integer counts as number; unions included). */
function typesOf(schema: Schema | undefined): Set<string> {
  const out = new Set<string>();
  if (!schema) return out;
  for (const type of [schema.type ?? []].flat()) out.add(type === 'integer' ? 'number' : type);
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])])
    for (const type of typesOf(alternative)) out.add(type);
  return out;
}
/** 1 MB (10^6 characters): the body stays under server.body_limit (1 MiB), so it reaches the validators. */
const MB = 'x'.repeat(1_000_000);

function probesFor(operation: Operation, random: () => number): Probe[] {
  const external = EXTERNAL_WORK.some((pattern) => pattern.test(operation.template));
  const base = (sampleOf(operation.schema) ?? {}) as Record<string, unknown>;
  const baseObject = typeof base === 'object' && !Array.isArray(base) ? base : {};
  const top = Object.keys(operation.schema?.properties ?? {});
  const with_ = (field: string, raw: string) => {
    const rest = JSON.stringify({ ...baseObject, [field]: undefined });
    return rest === '{}' ? `{${JSON.stringify(field)}:${raw}}` : `{${JSON.stringify(field)}:${raw},${rest.slice(1)}`;
  };
  const url = operation.url;
  const probes: Probe[] = [
    ...(external ? [] : [{ what: 'empty object', url, body: '{}' }]),
    { what: 'top-level array', url, body: '[1,2]' },
    { what: 'top-level string', url, body: '"probe"' },
    { what: 'top-level number', url, body: '7' },
    { what: 'top-level null', url, body: 'null' },
    ...(external ? [] : [{ what: 'empty json body', url, body: '' }]),
    { what: 'wrong content-type', url, body: 'name=probe', contentType: 'text/plain' },
  ];
  // wrong JSON types per top-level field (a seeded choice of 2 the schema does not admit, at most 8 fields)
  for (const field of top.slice(0, 8)) {
    const admitted = typesOf(operation.schema?.properties?.[field]);
    const wrong = WRONG_TYPES.filter(([type]) => admitted.size > 0 && !admitted.has(type));
    for (let i = 0; i < 2 && wrong.length > 0; i++) {
      const [, raw] = wrong[Math.floor(random() * wrong.length)];
      probes.push({ what: `${field}=${raw}`, url, body: with_(field, raw) });
    }
  }
  const stringField = top.find((f) => {
    const t = operation.schema?.properties?.[f]?.type;
    return t === 'string' || (Array.isArray(t) && t.includes('string'));
  });
  const field = stringField ?? top[0] ?? 'name';
  const [head, tail] = with_(field, '"\u0000"').split('"\u0000"');
  probes.push(
    // the last of duplicate keys wins (JSON.parse): on external routes the last is the wrong type
    external
      ? { what: `duplicate ${field}`, url, body: `{${JSON.stringify(field)}:"dup",${with_(field, '[1]').slice(1)}` }
      : { what: `duplicate ${field}`, url, body: `{${JSON.stringify(field)}:1,${with_(field, '"dup"').slice(1)}` },
    // "\xff\xfe\xc3" as the string field's raw bytes
    {
      what: `${field} invalid utf-8`,
      url,
      body: Buffer.concat([Buffer.from(head + '"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"' + tail)]),
    },
    {
      what: 'prototype keys',
      url,
      body: `{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"prototype":1,${with_(field, external ? '[1]' : '"p"').slice(1)}`,
    },
  );
  if (!external) {
    probes.push(
      { what: `${field} 1 MB`, url, body: with_(field, JSON.stringify(MB)) },
      { what: `${field} NUL`, url, body: with_(field, '"a\\u0000b"') },
      { what: `${field} lone surrogate`, url, body: with_(field, '"a\\ud800b"') },
      { what: `${field} RTL/emoji`, url, body: with_(field, JSON.stringify('\u202eשלום 🧨👨‍👩‍👧')) },
      { what: 'plausible body', url, body: JSON.stringify(baseObject) },
    );
    if (operation.template.includes('{'))
      for (const id of ['..', '%2e%2e', 'x'.repeat(300), encodeURIComponent('ünï-🧨'), '%00'])
        probes.push({
          what: `param ${id.slice(0, 20)}`,
          url: operation.template.replaceAll(/\{[^}]+\}/g, id),
          body: JSON.stringify(baseObject),
        });
  } else if (operation.template.includes('{'))
    for (const id of ['..', '%2e%2e', 'x'.repeat(300)])
      probes.push({
        what: `param ${id.slice(0, 20)}`,
        url: operation.template.replaceAll(/\{[^}]+\}/g, id),
        body: '[]',
      });
  for (const name of [...operation.query, 'x'])
    probes.push({
      what: `query ${name}[]`,
      url: `${url}?${name}=1&${name}=2`,
      body: external ? '[]' : JSON.stringify(baseObject),
    });
  return probes;
}

test('no write route answers bad input with a 5xx; the app keeps serving and no data file breaks', async (t) => {
  const errors: Array<Record<string, unknown>> = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (Number(entry.level) >= 50) errors.push(entry);
      }
      done();
    },
  });
  const dir = await tempDir(t);
  const staticConfig = path.join(dir, 'traefik.yml');
  await writeFile(staticConfig, 'entryPoints:\n  web:\n    address: ":80"\n');
  await mkdir(path.join(dir, 'plugins-local'));
  const app = await build(t, {
    config: {
      auth: { mode: 'off' },
      log: { level: 'error' },
      proxy: { static_config_path: staticConfig, plugins_local_dir: path.join(dir, 'plugins-local') },
    },
    logStream,
  });
  const base = await listen(app);
  const operations = await writeOperations(app, NO_INPUT);
  t.true(operations.length >= 40, `only ${operations.length} write operations in the OpenAPI document`);
  const random = seededRandom(24);

  const failures: string[] = [];
  let requests = 0;
  const statuses = new Map<number, number>();
  const started = Date.now();
  for (const operation of operations)
    for (const probe of probesFor(operation, random)) {
      requests += 1;
      const headers: Record<string, string> = {};
      if (probe.body !== undefined) headers['content-type'] = probe.contentType ?? 'application/json';
      const body =
        probe.body === undefined ? undefined : typeof probe.body === 'string' ? probe.body : new Uint8Array(probe.body);
      const response = await fetch(base + probe.url, { method: operation.method, headers, body });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const text = await response.text();
      let json: Record<string, unknown> | null = null;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // not JSON: reported below when it is an error
      }
      const excerpt = typeof probe.body === 'string' ? probe.body.slice(0, 80) : '<bytes>';
      const where = `${operation.method} ${probe.url.slice(0, 80)} [${probe.what}] ${excerpt}`;
      if (response.status >= 500) failures.push(`${where} → ${response.status} ${text.slice(0, 200)}`);
      else if (response.status >= 400 && (typeof json?.id !== 'string' || typeof json?.message !== 'string'))
        failures.push(`${where} → ${response.status} not {id, message}: ${text.slice(0, 200)}`);
    }
  const seconds = (Date.now() - started) / 1000;
  t.log(`${requests} requests over ${operations.length} write operations in ${seconds.toFixed(1)} s`);
  t.log(
    `answers: ${[...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ')}`,
  );
  t.deepEqual(failures, [], `${failures.length} of ${requests} fuzzed requests`);
  t.true(requests > 800);

  t.is((await fetch(`${base}/api/health`)).status, 200);
  t.deepEqual(app.store.invalidFiles(), []);
  t.deepEqual(
    errors.map((e) => `${String(e.msg)} ${JSON.stringify(e.err ?? '').slice(0, 200)}`),
    [],
    'error-level log lines',
  );
  t.is(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype polluted');
});

test('a JSON body that is not valid UTF-8 is 400 invalid_json, not stored with U+FFFD in its place', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  const json = (text: string, ...bytes: number[]) => {
    const [head, tail] = text.split('$');
    return Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
  };
  const post = (body: Buffer) =>
    fetch(`${base}/api/middlewares`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array(body),
    });
  const bad = await post(json('{"name":"bad $","type":"rateLimit","config":{"average":1,"burst":1}}', 0xff, 0xfe));
  t.is(bad.status, 400);
  t.like(await bad.json(), { id: 'invalid_json', message: 'request body is not valid UTF-8' });
  t.deepEqual(((await (await fetch(`${base}/api/middlewares`)).json()) as unknown[]).length, 0);
  // a BOM and real multi-byte UTF-8 still pass
  const good = await post(
    json('\ufeff{"name":"ok $","type":"rateLimit","config":{"average":1,"burst":1}}', 0xf0, 0x9f, 0xa7, 0xa8),
  );
  t.is(good.status, 201, await good.clone().text());
  t.is(((await good.json()) as { name: string }).name, 'ok 🧨');
});

test('a lone UTF-16 surrogate escape in a value or a key is 422 at its path; escaped pairs pass', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const base = await listen(app);
  const post = (text: string) =>
    fetch(`${base}/api/middlewares`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  const lone = await post('{"name":"a\\ud800b","type":"rateLimit","config":{"average":1,"burst":1}}');
  t.is(lone.status, 422);
  t.like(await lone.json(), { id: 'validation_failed', details: [{ path: '/name' }] });
  const key = await post('{"name":"hdr","type":"headers","config":{"customRequestHeaders":{"X-\\udc00":"v"}}}');
  t.is(key.status, 422);
  t.like(await key.json(), { details: [{ path: '/config/customRequestHeaders/X-\udc00' }] });
  t.deepEqual(((await (await fetch(`${base}/api/middlewares`)).json()) as unknown[]).length, 0, 'nothing stored');
  const pair = await post('{"name":"ok \\ud83e\\udde8","type":"rateLimit","config":{"average":1,"burst":1}}');
  t.is(pair.status, 201, await pair.clone().text());
  t.is(((await pair.json()) as { name: string }).name, 'ok 🧨');
});
