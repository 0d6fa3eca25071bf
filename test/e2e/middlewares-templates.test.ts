/**
 * Every middleware Stack Manager offers is loadable by the real Traefik (issue 25 item 3): each
 * shipped template (config/templates/middlewares.yaml, read back from GET /api/middlewares after
 * seeding, so a new template is covered without touching this file), and each type of API.md §4.2
 * with a config that sets every field the Traefik JSON Schema lets our API accept. Each is assigned
 * to a resource of its own through the API; Traefik's API must then report the middleware and the
 * router `enabled`, without `error`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parse, stringify } from 'yaml';
import { DEFAULT_TEMPLATES_DIR } from '../../plugins/middlewares/templates.ts';
import { MIDDLEWARE_TYPES } from '../../plugins/middlewares/schemas.ts';
import { DEFAULT_TRAEFIK_SCHEMA_PATH } from '../../model/traefik-schema.ts';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  addResources,
  assertEnabled,
  assign,
  createMiddleware,
  routerOf,
  waitForLoaded,
} from './middlewares-support.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;

const plugin = (name: string) => path.join(import.meta.dirname, '..', 'fixtures', 'traefik-plugins', name);

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  stack = await startStack(hook.context(t), {
    config: { templates: { seed: true } },
    traefik: {
      // stand-ins under the static keys the plugin templates name (Traefik cannot download plugins here)
      localPlugins: {
        crowdsec: {
          moduleName: 'github.com/maxlerebourg/crowdsec-bouncer-traefik-plugin',
          source: plugin('crowdsec-stub'),
        },
        geoblock: { moduleName: 'github.com/PascalMinder/geoblock', source: plugin('geoblock-stub') },
      },
    },
  });
});

/**
 * Assigns each middleware to a new resource of its own (ids from `firstId`), waits until Traefik's
 * routers list them, and returns Traefik's complaints per middleware id (empty when all loaded).
 */
async function loadEach(ids: string[], firstId: number, prefix: string): Promise<Record<string, unknown>> {
  const resources = ids.map((id, i) => ({ id: firstId + i, name: `${prefix}-${id}`, host: `${prefix}-${id}.test` }));
  await addResources(stack, resources);
  await Promise.all(resources.map((resource, i) => assign(stack, routerOf(resource), ids[i])));
  const problems: Record<string, unknown> = {};
  await Promise.all(
    resources.map(async (resource, i) => {
      try {
        // ours first, then Pangolin's badger (G6)
        const loaded = await waitForLoaded(stack.traefik, routerOf(resource), [ids[i], 'badger']);
        const [middleware] = loaded.middlewares;
        if (middleware.status !== 'enabled' || middleware.error)
          problems[ids[i]] = { middleware: middleware.status, error: middleware.error };
        else if (loaded.router.status !== 'enabled' || loaded.router.error)
          problems[ids[i]] = { router: loaded.router.status, error: loaded.router.error };
      } catch (error) {
        problems[ids[i]] = (error as Error).message;
      }
    }),
  );
  if (Object.keys(problems).length)
    problems.traefikLog = stack.traefik
      .log()
      .split('\n')
      .filter((line) => / (ERR|WRN) /.test(line))
      .slice(-20);
  return problems;
}

e2e('every shipped middleware template is loaded by Traefik, assigned to a resource', async (t) => {
  const shipped = parse(readFileSync(path.join(DEFAULT_TEMPLATES_DIR, 'middlewares.yaml'), 'utf8')) as {
    middlewares: Array<{ id: string }>;
  };
  const listed = await stack.sm.call('GET', '/api/middlewares?per_page=1000');
  t.is(listed.status, 200);
  const ids = (listed.json as Array<{ id: string }>).map((m) => m.id);
  // every template was seeded (an invalid one is skipped with a log line only)
  t.deepEqual([...ids].sort(), shipped.middlewares.map((m) => m.id).sort());
  t.deepEqual(await loadEach(ids, 1000, 'tpl'), {});
});

/** A password file on Traefik's disk for the `usersFile` fields. */
async function usersFile(name: string, line: string): Promise<string> {
  const file = path.join(stack.traefik.dir, name);
  await writeFile(file, `${line}\n`);
  return file;
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('base64');
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

/**
 * One or more configs per type that together set every top-level field of the type's definition in
 * the Traefik JSON Schema (the fields our API accepts): a field our API takes but Traefik does not
 * know makes Traefik refuse the whole document.
 */
async function examples(): Promise<Record<string, Array<Record<string, unknown>>>> {
  const errorPages = `${routerOf({ id: 1, name: 'app' }).replace(/-router$/, '')}-service`;
  return {
    addPrefix: [{ prefix: '/prefix' }],
    basicAuth: [
      {
        users: [`alice:{SHA}${sha1('secret')}`],
        usersFile: await usersFile('basic.htpasswd', `bob:{SHA}${sha1('other')}`),
        realm: 'Example',
        headerField: 'X-WebAuth-User',
        removeHeader: true,
      },
    ],
    buffering: [
      {
        maxRequestBodyBytes: 1_048_576,
        memRequestBodyBytes: 65_536,
        maxResponseBodyBytes: 1_048_576,
        memResponseBodyBytes: 65_536,
        retryExpression: 'IsNetworkError() && Attempts() < 2',
      },
    ],
    chain: [{ middlewares: ['type-addprefix-0', 'type-replacepath-0'] }],
    circuitBreaker: [
      {
        expression: 'NetworkErrorRatio() > 0.5 || ResponseCodeRatio(500, 600, 0, 600) > 0.5',
        checkPeriod: '100ms',
        fallbackDuration: '10s',
        recoveryDuration: '10s',
        responseCode: 503,
      },
    ],
    compress: [
      { excludedContentTypes: ['text/event-stream'], minResponseBodyBytes: 1024, defaultEncoding: 'gzip' },
      { includedContentTypes: ['application/json'], encodings: ['zstd', 'br', 'gzip'] },
    ],
    contentType: [{ autoDetect: true }],
    digestAuth: [
      {
        users: [`alice:Example:${md5('alice:Example:secret')}`],
        usersFile: await usersFile('digest.htdigest', `bob:Example:${md5('bob:Example:other')}`),
        realm: 'Example',
        headerField: 'X-WebAuth-User',
        removeHeader: true,
      },
    ],
    errors: [{ status: ['500-599'], service: errorPages, query: '/{status}.html' }],
    forwardAuth: [
      {
        address: 'http://127.0.0.1:9/auth',
        tls: { insecureSkipVerify: true },
        trustForwardHeader: true,
        authResponseHeaders: ['X-Auth-User'],
        authResponseHeadersRegex: '^X-Auth-',
        authRequestHeaders: ['Accept', 'X-Token'],
        addAuthCookiesToResponse: ['session'],
        forwardBody: true,
        maxBodySize: 4096,
        maxResponseBodySize: 4096,
        headerField: 'X-Auth-Id',
        preserveLocationHeader: true,
        preserveRequestMethod: true,
      },
    ],
    grpcWeb: [{ allowOrigins: ['https://app.example'] }],
    headers: [
      {
        customRequestHeaders: { 'X-Request': 'yes', 'X-Removed': '' },
        customResponseHeaders: { 'X-Response': 'yes', Server: '' },
        accessControlAllowCredentials: true,
        accessControlAllowHeaders: ['Content-Type'],
        accessControlAllowMethods: ['GET', 'POST'],
        accessControlAllowOriginList: ['https://app.example'],
        accessControlAllowOriginListRegex: ['^https://.*\\.example$'],
        accessControlExposeHeaders: ['X-Response'],
        accessControlMaxAge: 600,
        addVaryHeader: true,
        allowedHosts: [],
        hostsProxyHeaders: ['X-Forwarded-Host'],
        sslRedirect: false,
        sslTemporaryRedirect: false,
        sslHost: '',
        sslProxyHeaders: { 'X-Forwarded-Proto': 'https' },
        sslForceHost: false,
        stsSeconds: 31_536_000,
        stsIncludeSubdomains: true,
        stsPreload: true,
        forceSTSHeader: true,
        frameDeny: true,
        customFrameOptionsValue: 'SAMEORIGIN',
        contentTypeNosniff: true,
        browserXssFilter: true,
        customBrowserXSSValue: '1; mode=block',
        contentSecurityPolicy: "default-src 'self'",
        contentSecurityPolicyReportOnly: "default-src 'self'; report-uri /csp",
        publicKey: 'pin-sha256="base64+primary=="; max-age=5184000',
        referrerPolicy: 'same-origin',
        featurePolicy: 'camera none',
        permissionsPolicy: 'camera=()',
        isDevelopment: false,
      },
    ],
    ipAllowList: [
      { sourceRange: ['127.0.0.1/32', '::1/128'], rejectStatusCode: 404, ipStrategy: { excludedIPs: ['10.0.0.1'] } },
    ],
    ipWhiteList: [{ sourceRange: ['127.0.0.1/32'], ipStrategy: { depth: 1 } }],
    inFlightReq: [{ amount: 10, sourceCriterion: { requestHeaderName: 'X-Client' } }],
    passTLSClientCert: [
      {
        pem: true,
        info: {
          notAfter: true,
          notBefore: true,
          sans: true,
          serialNumber: true,
          subject: {
            country: true,
            province: true,
            locality: true,
            organization: true,
            organizationalUnit: true,
            commonName: true,
            serialNumber: true,
            domainComponent: true,
          },
          issuer: {
            country: true,
            province: true,
            locality: true,
            organization: true,
            commonName: true,
            serialNumber: true,
            domainComponent: true,
          },
        },
      },
    ],
    plugin: [{ badger: { apiBaseUrl: 'http://127.0.0.1:9/api/v1', userSessionCookieName: 'p_session' } }],
    rateLimit: [
      { average: 100, period: '1s', burst: 50, sourceCriterion: { ipStrategy: { depth: 1 } } },
      { average: 10, period: 60, burst: 5, sourceCriterion: { requestHost: true } },
    ],
    redirectRegex: [{ regex: '^https?://([^/]+)/old/(.*)', replacement: 'https://${1}/new/${2}', permanent: true }],
    redirectScheme: [{ scheme: 'https', port: '8443', permanent: true }],
    replacePath: [{ path: '/replaced' }],
    replacePathRegex: [{ regex: '^/old/(.*)', replacement: '/new/$1' }],
    retry: [{ attempts: 3, initialInterval: '100ms' }],
    stripPrefix: [{ prefixes: ['/api', '/v1'], forceSlash: false }],
    stripPrefixRegex: [{ regex: ['/users/[0-9]+'] }],
  };
}

e2e('every middleware type, with every field our API accepts, is loaded by Traefik', async (t) => {
  const byType = await examples();
  const definitions = JSON.parse(readFileSync(DEFAULT_TRAEFIK_SCHEMA_PATH, 'utf8')).definitions;
  // every type API.md offers has examples, and they set every field the schema (so our API) accepts
  t.deepEqual(Object.keys(byType).sort(), [...MIDDLEWARE_TYPES].sort());
  const unset: Record<string, string[]> = {};
  for (const type of MIDDLEWARE_TYPES) {
    const set = new Set(byType[type].flatMap((config) => Object.keys(config)));
    const missing = Object.keys(definitions[`${type}Middleware`].properties ?? {}).filter((key) => !set.has(key));
    if (missing.length) unset[type] = missing;
  }
  t.deepEqual(unset, {});

  // chain members first: a chain's members must exist when it is created
  const order = [...MIDDLEWARE_TYPES].sort((a, b) => Number(a === 'chain') - Number(b === 'chain'));
  const ids: string[] = [];
  for (const type of order) {
    for (const [i, config] of byType[type].entries()) {
      const id = `type-${type.toLowerCase()}-${i}`;
      await createMiddleware(stack, { id, type, config });
      ids.push(id);
    }
  }
  t.deepEqual(await loadEach(ids, 2000, 'type'), {});
});

e2e(
  'a middleware Traefik could not decode never reaches it: refused by the API, held back from a hand edit',
  async (t) => {
    // each made Traefik refuse the whole document: `strconv.ParseInt: parsing "1.500000": invalid
    // syntax`, `headers cannot be a standalone element`, `sourceCriterion cannot be a standalone element`
    const undecodable: Array<[string, string, Record<string, unknown>]> = [
      ['fraction', 'rateLimit', { average: 10, burst: 1.5 }],
      ['empty', 'headers', {}],
      ['empty-nested', 'rateLimit', { average: 10, sourceCriterion: {} }],
    ];
    for (const [name, type, config] of undecodable) {
      const refused = await stack.sm.call('POST', '/api/middlewares', { name, type, config });
      t.is(refused.status, 422, refused.text);
      await writeFile(
        path.join(stack.sm.dataDir, 'middlewares', `hand-${name}.yaml`),
        stringify({ name, type, config }),
      );
    }
    await waitFor(async () => {
      const status = (await stack.sm.call('GET', '/api/proxy-config/status')).json as any;
      const invalid = status.invalid_files.map((file: { path: string }) => file.path).join();
      return undecodable.every(([name]) => invalid.includes(`hand-${name}.yaml`));
    }, 5_000);
    // Traefik still takes our later changes
    await createMiddleware(stack, { id: 'after-undecodable', type: 'addPrefix', config: { prefix: '/after' } });
    const resource = { id: 3000, name: 'after-undecodable', host: 'after-undecodable.test' };
    await addResources(stack, [resource]);
    await assign(stack, routerOf(resource), 'after-undecodable');
    assertEnabled(t, await waitForLoaded(stack.traefik, routerOf(resource), ['after-undecodable', 'badger']));
    t.false(stack.traefik.log().includes('cannot decode configuration data'));
  },
);
