/**
 * Bad input deep inside a body never gives a 5xx (API.md §2, issue 24 follow-up to route-fuzz): for
 * every write route of the app's OpenAPI document a VALID body is built (a hand-written one where the
 * schema's patterns cannot be guessed, else from the request schema: examples, defaults, enums,
 * formats, optional fields too; the required-only body when the full one is refused; for
 * POST/PUT /api/middlewares one real config per Traefik middleware type), then every field path in it
 * (down to 4 levels, array items and record keys included) is mutated one at a time: the JSON types
 * it does not hold, null, 1e308, -0, 2^63, "", a 10,000-character string, an array where an object is,
 * an unknown extra key in an object. Seeded (24); each request gets a fresh name/id so valid mutations
 * reach the handler instead of a 409. Asserts < 500 and {id, message} on every 4xx, then /api/health
 * 200, no invalid data file, no error-level log line.
 *
 * Left out: the routes route-fuzz lists as EXTERNAL_WORK (Docker, network, restore, install, tests
 * of channels/datasources, jobs): a still-valid mutation there would start real work.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import test, { type ExecutionContext, type TestFn } from 'ava';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { crowdsecConfig, useLapi, type Lapi } from '../helpers/crowdsec-lapi.ts';
import { EXTERNAL_WORK, listen, writeOperations, type Operation, type Schema } from '../helpers/openapi-operations.ts';
import { seededRandom } from '../helpers/random.ts';

/** route-fuzz's list, and the invalidate route (no input; its answer is Pangolin's, absent here). */
const SKIPPED = [...EXTERNAL_WORK, /^\/api\/proxy-config\/invalidate$/];

/** The id every `{param}` of a path gets; a resource with this id is created first. */
const PARAM = 'nf-probe';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Body = Record<string, Json>;

/** One config per Traefik middleware type (as the Traefik JSON Schema admits them; no files). */
const MIDDLEWARE_CONFIGS: Record<string, Body> = {
  addPrefix: { prefix: '/prefix' },
  basicAuth: { users: ['alice:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ='], realm: 'Example', removeHeader: true },
  buffering: { maxRequestBodyBytes: 1_048_576, memRequestBodyBytes: 65_536, retryExpression: 'IsNetworkError()' },
  chain: { middlewares: [`${PARAM}-member`] },
  circuitBreaker: { expression: 'NetworkErrorRatio() > 0.5', checkPeriod: '100ms', responseCode: 503 },
  compress: { excludedContentTypes: ['text/event-stream'], minResponseBodyBytes: 1024, encodings: ['gzip'] },
  contentType: { autoDetect: true },
  digestAuth: { users: ['alice:Example:0123456789abcdef0123456789abcdef'], realm: 'Example' },
  errors: { status: ['500-599'], service: `nf-shared-service`, query: '/{status}.html' },
  forwardAuth: {
    address: 'http://127.0.0.1:9/auth',
    tls: { insecureSkipVerify: true },
    authResponseHeaders: ['X-Auth-User'],
    maxBodySize: 4096,
  },
  grpcWeb: { allowOrigins: ['https://app.example'] },
  headers: {
    customRequestHeaders: { 'X-Request': 'yes' },
    accessControlAllowMethods: ['GET'],
    accessControlMaxAge: 600,
    sslProxyHeaders: { 'X-Forwarded-Proto': 'https' },
    stsSeconds: 31_536_000,
  },
  ipAllowList: { sourceRange: ['127.0.0.1/32'], rejectStatusCode: 404, ipStrategy: { excludedIPs: ['10.0.0.1'] } },
  ipWhiteList: { sourceRange: ['127.0.0.1/32'], ipStrategy: { depth: 1 } },
  inFlightReq: { amount: 10, sourceCriterion: { requestHeaderName: 'X-Client' } },
  passTLSClientCert: { pem: true, info: { notAfter: true, subject: { country: true }, issuer: { commonName: true } } },
  plugin: { badger: { apiBaseUrl: 'http://127.0.0.1:9/api/v1', nested: { list: [1, 'a'] } } },
  rateLimit: { average: 100, period: '1s', burst: 50, sourceCriterion: { ipStrategy: { depth: 1 } } },
  redirectRegex: { regex: '^https?://([^/]+)/old/(.*)', replacement: 'https://${1}/new/${2}', permanent: true },
  redirectScheme: { scheme: 'https', port: '8443', permanent: true },
  replacePath: { path: '/replaced' },
  replacePathRegex: { regex: '^/old/(.*)', replacement: '/new/$1' },
  retry: { attempts: 3, initialInterval: '100ms' },
  stripPrefix: { prefixes: ['/api', '/v1'], forceSlash: false },
  stripPrefixRegex: { regex: ['/users/[0-9]+'] },
};

const RESOURCE: Body = {
  name: 'nested fuzz',
  hosts: ['app.example.com'],
  path_prefix: '/app',
  entrypoints: ['websecure'],
  servers: ['http://127.0.0.1:9'],
  tls: { cert_resolver: 'letsencrypt', domains: [{ main: 'example.com', sans: ['www.example.com'] }] },
  priority: 10,
  middlewares: [{ middleware_id: `${PARAM}-member`, priority: 100 }],
};

const CHANNEL: Body = {
  name: 'hook',
  type: 'webhook',
  enabled: false,
  categories: ['security'],
  quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Paris' },
  max_per_minute: 10,
  config: { url: 'http://127.0.0.1:9/hook', secret: 's', headers: { 'X-A': '1' } },
};

/** Valid bodies the schema alone cannot give (patterns, cross-field rules), by "METHOD template". */
const HAND_WRITTEN: Record<string, Body[]> = {
  'POST /api/middlewares': Object.entries(MIDDLEWARE_CONFIGS).map(([type, config]) => ({ name: type, type, config })),
  'PUT /api/middlewares/{id}': Object.entries(MIDDLEWARE_CONFIGS).map(([type, config]) => ({
    name: type,
    type,
    config,
  })),
  'POST /api/resources': [RESOURCE],
  'PUT /api/resources/{id}': [RESOURCE],
  'POST /api/resources/{id}/middlewares': [{ middleware_id: `${PARAM}-member`, priority: 100 }],
  'POST /api/resources/{id}/middlewares/bulk': [
    { middlewares: [{ middleware_id: `${PARAM}-member`, priority: 100 }], replace: false },
  ],
  'POST /api/resources/{id}/external-middlewares': [{ name: 'crowdsec@file', priority: 50, provider: 'file' }],
  'POST /api/resources/{id}/service': [{ service_id: `nf-shared-service` }],
  'PUT /api/resources/{id}/config/tls': [
    { cert_resolver: 'letsencrypt', domains: [{ main: 'example.com', sans: ['www.example.com'] }] },
  ],
  'POST /api/services': [
    { name: 'svc', type: 'loadBalancer', config: { servers: [{ url: 'http://127.0.0.1:9' }], passHostHeader: true } },
  ],
  'PUT /api/services/{id}': [
    { name: 'svc', type: 'loadBalancer', config: { servers: [{ url: 'http://127.0.0.1:9' }], passHostHeader: true } },
  ],
  'PUT /api/datasource/{name}': [
    {
      type: 'traefik',
      url: 'http://127.0.0.1:9',
      skip_tls_verify: false,
      basic_auth: { username: 'u', password: 'p' },
    },
  ],
  'PUT /api/datasource/active': [{ name: 'none' }],
  'PUT /api/static/entrypoints/{name}': [{ address: ':8081' }],
  'POST /api/notifications/channels': [CHANNEL],
  'PUT /api/notifications/channels/{id}': [CHANNEL],
};

/** A leaf value for a schema: its example, default, const or first enum value, else one of its format. */
function leafOf(schema: Schema & Record<string, unknown>): Json | undefined {
  const examples = schema.examples as Json[] | undefined;
  if (examples?.length) return examples[0];
  if (schema.default !== undefined) return schema.default as Json;
  if (schema.const !== undefined) return schema.const as Json;
  if (schema.enum?.length) return schema.enum[0] as Json;
  if (schema.format === 'uri') return 'http://127.0.0.1:9/';
  if (schema.format === 'hostname') return 'app.example.com';
  if (schema.format === 'email') return 'fuzz@example.com';
  if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
  if (schema.format === 'ipv4') return '192.0.2.9';
  return undefined;
}

/** A body for a schema: required fields, and with `full` the optional ones too. */
function bodyOf(schema: Schema | undefined, full: boolean, depth = 0): Json {
  if (!schema || depth > 6) return null;
  const leaf = leafOf(schema as Schema & Record<string, unknown>);
  if (leaf !== undefined) return leaf;
  const alternatives = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].filter((s) => s.type !== 'null');
  if (alternatives.length) return bodyOf(alternatives[0], full, depth + 1);
  const type = [schema.type ?? 'object'].flat().find((t) => t !== 'null');
  switch (type) {
    case 'string':
      return 'fuzz'.padEnd(schema.minLength ?? 0, 'z');
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return [bodyOf(schema.items, full, depth + 1)];
    case 'null':
      return null;
    default: {
      const out: Body = {};
      const names = full ? Object.keys(schema.properties ?? {}) : (schema.required ?? []);
      for (const name of names) out[name] = bodyOf(schema.properties?.[name], full, depth + 1);
      return out;
    }
  }
}

/** Every path in a value (JSON Pointer segments), down to `max` levels; the root excluded. */
function pathsOf(value: Json, max = 4, at: string[] = []): string[][] {
  if (at.length >= max || value === null || typeof value !== 'object') return [];
  const out: string[][] = [];
  for (const [key, child] of Object.entries(value)) {
    out.push([...at, key], ...pathsOf(child, max, [...at, key]));
  }
  return out;
}

/** Raw JSON texts JSON.stringify cannot write (-0, 2^63 exactly) go in through a marker. */
const RAW = '\u0001raw\u0001';
const LONG = 'x'.repeat(10_000);

/** The mutations of one value: its JSON text replacements (raw), with a label. */
function mutationsOf(value: Json, random: () => number): Array<[string, string | ((v: Json) => Json)]> {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const swaps: Array<[string, string]> = (
    [
      ['string', '"text"'],
      ['number', '42'],
      ['boolean', 'false'],
      ['array', '[1,"a",null]'],
      ['object', '{"k":{"n":1}}'],
    ] as Array<[string, string]>
  ).filter(([type]) => type !== kind);
  const out: Array<[string, string | ((v: Json) => Json)]> = swaps.map(([type, raw]) => [`→${type}`, raw]);
  out.push(['null', 'null'], ['1e308', '1e308'], ['-0', '-0'], ['2^63', '9223372036854775808']);
  out.push(['""', '""'], ['10k chars', JSON.stringify(LONG)]);
  if (kind === 'object') {
    out.push(['[object]', (v) => [v]]);
    out.push(['extra key', (v) => ({ ...(v as Body), zz_unknown_key: { deep: [1] } })]);
    // odd keys: record fields (headers, plugin configs) take any key, and keys become YAML keys and pointers
    for (const key of ['', LONG, 'a/b~0c', '__proto__', 'nul\u0000key', 'x'.repeat(300)])
      out.push([`key ${JSON.stringify(key.slice(0, 12))}`, (v) => ({ ...(v as Body), [key]: 'v' })]);
  }
  if (kind === 'array') {
    out.push(['extra item', (v) => [...(v as Json[]), (v as Json[])[0] ?? 'x', { k: 1 }]]);
    out.push([
      '1000 items',
      (v) => Array.from({ length: 1000 }, (_, i) => ((v as Json[])[0] === undefined ? i : (v as Json[])[0])),
    ]);
  }
  // a seeded pick keeps the number of requests per path bounded for scalars (objects get all)
  if (kind !== 'object' && kind !== 'array') {
    while (out.length > 7) out.splice(Math.floor(random() * out.length), 1);
  }
  return out;
}

/** `body` with `mutation` at `at`, as JSON text. */
function mutate(body: Body, at: string[], mutation: string | ((v: Json) => Json)): string {
  const copy = structuredClone(body) as Body;
  let parent: Json = copy;
  for (const key of at.slice(0, -1)) parent = (parent as Record<string, Json>)[key];
  const last = at[at.length - 1];
  const holder = parent as Record<string, Json>;
  if (typeof mutation === 'function') {
    holder[last] = mutation(holder[last]);
    return JSON.stringify(copy);
  }
  holder[last] = RAW;
  return JSON.stringify(copy).replace(JSON.stringify(RAW), mutation);
}

/** A fresh name/id per request (unless that field is the one mutated), so valid mutations do not 409. */
function fresh(body: Body, at: string[], n: number, operation: Operation): Body {
  if (operation.method !== 'POST' && operation.method !== 'PUT') return body;
  const copy = { ...body };
  const reference = operation.template === '/api/datasource/active' || operation.template.endsWith('-middlewares');
  if (typeof copy.name === 'string' && at[0] !== 'name' && !reference) copy.name = `${copy.name}-${n}`;
  if (operation.schema?.properties?.id && at[0] !== 'id' && operation.method === 'POST') copy.id = `nf-${n}`;
  return copy;
}

function isExternal(operation: Operation): boolean {
  return SKIPPED.some((pattern) => pattern.test(operation.template));
}

type Send = (method: string, url: string, body?: string) => Promise<{ status: number; text: string }>;

/** The app on a real socket, its error-level log lines collected, and a JSON sender. */
async function serve(
  t: ExecutionContext,
  config: Record<string, unknown>,
): Promise<{ app: FastifyInstance; base: string; send: Send; errors: Array<Record<string, unknown>> }> {
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
  const app = await build(t, { config: { auth: { mode: 'off' }, log: { level: 'error' }, ...config }, logStream });
  const base = await listen(app);
  const send: Send = async (method, url, body) => {
    const response = await fetch(base + url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body,
    });
    return { status: response.status, text: await response.text() };
  };
  return { app, base, send, errors };
}

/** Mutates every field path of a valid body of each operation; logs the counts and returns the failures. */
async function fuzz(
  t: ExecutionContext,
  send: Send,
  operations: Operation[],
  handWritten: Record<string, Body[]>,
): Promise<string[]> {
  const random = seededRandom(24);
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const refused: string[] = [];
  let requests = 0;
  let paths = 0;
  let bodies = 0;
  let serial = 0;
  const started = Date.now();
  for (const operation of operations) {
    const key = `${operation.method} ${operation.template}`;
    let candidates = handWritten[key];
    if (!candidates) {
      candidates = [];
      for (const full of [true, false]) {
        const body = bodyOf(operation.schema, full) as Body;
        if (body === null || typeof body !== 'object' || Array.isArray(body)) continue;
        const answer = await send(
          operation.method,
          operation.url,
          JSON.stringify(fresh(body, [], (serial += 1), operation)),
        );
        requests += 1;
        if (answer.status < 400) {
          candidates = [body];
          break;
        }
        if (!full) {
          refused.push(`${key} ${answer.status} ${answer.text.slice(0, 160)}`);
          candidates = [body];
        }
      }
    }
    for (const body of candidates) {
      bodies += 1;
      // the object the `{param}` routes of this collection work on
      if (operation.method === 'POST' && operation.schema?.properties?.id && !operation.template.includes('{'))
        await send('POST', operation.url, JSON.stringify({ ...body, id: PARAM, name: `${String(body.name)}-probe` }));
      const valid = await send(
        operation.method,
        operation.url,
        JSON.stringify(fresh(body, [], (serial += 1), operation)),
      );
      requests += 1;
      if (valid.status >= 400 && handWritten[key]) refused.push(`${key} ${valid.status} ${valid.text.slice(0, 160)}`);
      for (const at of pathsOf(body)) {
        paths += 1;
        const value = at.reduce<Json>((v, k) => (v as Record<string, Json>)[k], body);
        for (const [what, mutation] of mutationsOf(value, random)) {
          requests += 1;
          const text = mutate(fresh(body, at, (serial += 1), operation), at, mutation);
          const answer = await send(operation.method, operation.url, text);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          let json: Record<string, unknown> | null = null;
          try {
            json = JSON.parse(answer.text) as Record<string, unknown>;
          } catch {
            // reported below when it is an error
          }
          const where = `${key} /${at.join('/')} [${what}] ${text.slice(0, 100)}`;
          if (answer.status >= 500) failures.push(`${where} → ${answer.status} ${answer.text.slice(0, 200)}`);
          else if (answer.status >= 400 && (typeof json?.id !== 'string' || typeof json?.message !== 'string'))
            failures.push(`${where} → ${answer.status} not {id, message}: ${answer.text.slice(0, 200)}`);
        }
      }
    }
  }
  const seconds = (Date.now() - started) / 1000;
  t.log(
    `${requests} requests, ${paths} field paths in ${bodies} valid bodies over ${operations.length} operations, ${seconds.toFixed(1)} s`,
  );
  t.log(
    `answers: ${[...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ')}`,
  );
  if (refused.length) t.log(`bodies the app refused (mutated anyway): ${refused.length}\n${refused.join('\n')}`);
  return failures;
}

/** After the fuzz: health 200, no invalid data file, no error-level log line. */
async function intact(
  t: ExecutionContext,
  served: { app: FastifyInstance; base: string; errors: Array<Record<string, unknown>> },
): Promise<void> {
  t.is((await fetch(`${served.base}/api/health`)).status, 200);
  t.deepEqual(served.app.store.invalidFiles(), []);
  t.deepEqual(
    served.errors.map((e) => `${String(e.msg)} ${JSON.stringify(e.err ?? '').slice(0, 200)}`),
    [],
    'error-level log lines',
  );
}

const IP_ROUTES = /^\/api\/ip\//;

test('no nested field of a write route answers a mutation with a 5xx; data and health stay good', async (t) => {
  const dir = await tempDir(t);
  const staticConfig = path.join(dir, 'traefik.yml');
  await writeFile(
    staticConfig,
    'entryPoints:\n  web:\n    address: ":80"\n  websecure:\n    address: ":443"\n' +
      'experimental:\n  localPlugins:\n    badger:\n      moduleName: github.com/fosrl/badger\n',
  );
  await mkdir(path.join(dir, 'plugins-local'));
  const served = await serve(t, {
    proxy: { static_config_path: staticConfig, plugins_local_dir: path.join(dir, 'plugins-local') },
  });
  const { app, send } = served;
  // the objects the `{param}` routes and the bodies refer to
  const service = (id: string, name: string) => ({
    id,
    name,
    type: 'loadBalancer',
    config: { servers: [{ url: 'http://127.0.0.1:9' }] },
  });
  for (const [url, body] of [
    ['/api/middlewares', { id: `${PARAM}-member`, name: 'member', type: 'addPrefix', config: { prefix: '/m' } }],
    ['/api/services', service('nf-shared-service', 'service')],
    ['/api/resources', { ...RESOURCE, id: PARAM, name: 'probe resource' }],
  ] as const) {
    const answer = await send('POST', url, JSON.stringify(body));
    t.true(answer.status < 300, `setup ${url}: ${answer.status} ${answer.text}`);
  }
  const operations = (await writeOperations(app, new Set(), PARAM)).filter(
    (operation) =>
      !isExternal(operation) &&
      !IP_ROUTES.test(operation.template) &&
      operation.schema &&
      operation.method !== 'DELETE',
  );
  const failures = await fuzz(t, send, operations, {
    ...HAND_WRITTEN,
    'PUT /api/plugins/configpath': [{ path: staticConfig }],
  });
  t.deepEqual(failures, [], `${failures.length} mutated requests`);
  await intact(t, served);
  // what the still-valid mutations stored still makes a provider document
  const document = await send('GET', '/api/proxy-config');
  t.is(document.status, 200, document.text.slice(0, 300));
  const http = (JSON.parse(document.text) as { http?: Record<string, Record<string, unknown>> }).http ?? {};
  t.log(
    `provider document: ${Object.keys(http.middlewares ?? {}).length} middlewares, ${Object.keys(http.routers ?? {}).length} routers, ${Object.keys(http.services ?? {}).length} services`,
  );
});

const ipTest = useLapi(test as TestFn<{ lapi?: Lapi }>, 'nested-fuzz of the /api/ip write routes');

ipTest('the /api/ip write routes, against a real CrowdSec LAPI, answer every mutation below 500', async (t) => {
  const served = await serve(t, crowdsecConfig(t.context.lapi!));
  const operations = (await writeOperations(served.app, new Set(), PARAM)).filter(
    (operation) => IP_ROUTES.test(operation.template) && operation.schema && operation.method !== 'DELETE',
  );
  t.true(operations.length >= 3, operations.map((o) => o.template).join(' '));
  const failures = await fuzz(t, served.send, operations, {
    'POST /api/ip/unban': [{ ip: '192.0.2.7' }],
    'POST /api/ip/decisions': [{ value: '192.0.2.7', type: 'ban', duration: '1h', reason: 'fuzz' }],
    'POST /api/ip/allowlist': [{ value: '192.0.2.0/28', reason: 'fuzz', ttl: '1h' }],
  });
  t.deepEqual(failures, [], `${failures.length} mutated requests`);
  await intact(t, served);
});

test('an unknown key in a middleware struct the Traefik schema leaves open is 422 at its path, nothing stored', async (t) => {
  // found by the fuzz above: each was 201 and Traefik 3.7.15 then refused the whole provider
  // document ('field not found, node: zz_unknown_key')
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const cases: Array<[string, Body, string]> = [
    ['basicAuth', { users: ['alice:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ='], zz: 1 }, '/config/zz'],
    ['forwardAuth', { address: 'http://127.0.0.1:9/auth', tls: { insecureSkipVerify: true, zz: 1 } }, '/config/tls/zz'],
    ['passTLSClientCert', { info: { notAfter: true, zz: true } }, '/config/info/zz'],
    ['passTLSClientCert', { info: { subject: { commonName: true, zz: true } } }, '/config/info/subject/zz'],
    ['passTLSClientCert', { info: { issuer: { commonName: true, '': true } } }, '/config/info/issuer/'],
  ];
  for (const [type, config, at] of cases) {
    const answer = await app.inject({ method: 'POST', url: '/api/middlewares', payload: { name: at, type, config } });
    t.is(answer.statusCode, 422, answer.body);
    t.like(answer.json(), { id: 'validation_failed', details: [{ path: at }] });
  }
  t.deepEqual((await app.inject({ url: '/api/middlewares' })).json(), []);
  // every key Traefik decodes there still passes (organizationalUnit is missing from the schema)
  const full = await app.inject({
    method: 'POST',
    url: '/api/middlewares',
    payload: {
      name: 'every key',
      type: 'passTLSClientCert',
      config: {
        info: {
          sans: true,
          serialNumber: true,
          subject: { organizationalUnit: true, domainComponent: true },
          issuer: { country: true },
        },
      },
    },
  });
  t.is(full.statusCode, 201, full.body);
});
