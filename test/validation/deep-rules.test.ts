/**
 * Go expressions nested deeper than this process's stack (a buffering retryExpression, a
 * circuitBreaker expression, a TCP router rule): Go's parser reads them up to its nesting limit
 * (go/parser maxNestLev, 100000) and stops there with `exceeded max nesting depth`; Traefik builds or
 * refuses them accordingly. 20,000 parentheses or `!`s overflowed the JS stack (500, or a thrown
 * RangeError in the import and the file watcher). The expected errors below were measured with Go
 * 1.26's go/parser (Traefik 3.7.15 is built with Go 1.26.9).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import type { FastifyInstance } from 'fastify';
import { GO_MAX_NESTING, parseGoExpression } from '../../model/go-expression.ts';
import { tcpRuleError } from '../../model/tcp-rule.ts';
import { circuitBreakerError } from '../../plugins/middlewares/circuit-breaker.ts';
import { retryExpressionError } from '../../plugins/middlewares/retry-expression.ts';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { mmDatabase } from '../import/mm-db.ts';
import { GRAFANA, harness, NEXTCLOUD, WIKI } from '../resources/support.ts';

const around = (levels: number, inner: string) => `${'('.repeat(levels)}${inner}${')'.repeat(levels)}`;

test("parseGoExpression reads 20,000 levels and stops at Go's nesting limit with Go's error", (t) => {
  t.is(GO_MAX_NESTING, 100_000);
  for (const src of [
    around(20_000, 'x'),
    `${'!'.repeat(20_000)}x`,
    `${'f('.repeat(20_000)}x${')'.repeat(20_000)}`,
    `${'a && ('.repeat(20_000)}x${')'.repeat(20_000)}`,
    Array(20_000).fill('a').join(' && '),
    around(99_998, 'x'),
    `${'!'.repeat(99_998)}x`,
  ])
    t.false('error' in parseGoExpression(src), src.slice(0, 12));
  // what Go 1.26's parser.ParseExpr answers (99 such cases compared while writing this: all agree)
  const measured: Array<[string, string]> = [
    [around(99_999, 'x'), '1:100001: exceeded max nesting depth'],
    [around(100_000, 'x'), '1:100001: exceeded max nesting depth'],
    [`${'!'.repeat(99_999)}x`, '1:100001: exceeded max nesting depth'],
    [`${'!'.repeat(100_000)})`, '1:100001: exceeded max nesting depth'],
    [`${'f('.repeat(50_000)}x${')'.repeat(50_000)}`, '1:100001: exceeded max nesting depth'],
    [`${'a && ('.repeat(100_000)}x${')'.repeat(100_000)}`, '1:300001: exceeded max nesting depth'],
    [`x${'.y'.repeat(100_000)}`, '1:200000: exceeded max nesting depth'],
    [around(33_331, ''), "1:33332: expected operand, found ')'"],
  ];
  for (const [src, error] of measured) t.deepEqual(parseGoExpression(src), { error }, src.slice(0, 12));
});

const DEEP = 20_000;
/** past Go's limit: 100,000 parentheses (Traefik 3.7.15: '1:100001: exceeded max nesting depth') */
const TOO_DEEP = 100_000;
const LIMIT_ERROR = '1:100001: exceeded max nesting depth';

test('retryExpression, circuitBreaker expression and TCP rule checks at 20,000 levels and past the limit', (t) => {
  const cases: Array<[(text: string) => string | null, string, string | null]> = [
    [retryExpressionError, around(DEEP, 'IsNetworkError()'), null],
    [retryExpressionError, Array(DEEP).fill('IsNetworkError()').join(' || '), null],
    [retryExpressionError, around(DEEP, 'IsNetworkError() || Attempts() < 2.5'), 'expected int, got float64'],
    [retryExpressionError, `${'!'.repeat(DEEP)}IsNetworkError()`, '! is not supported'],
    [retryExpressionError, around(TOO_DEEP, 'IsNetworkError()'), LIMIT_ERROR],
    [circuitBreakerError, around(DEEP, 'NetworkErrorRatio() > 0.5'), null],
    [
      circuitBreakerError,
      `${'NetworkErrorRatio() > 0.5 || ('.repeat(DEEP)}true${')'.repeat(DEEP)}`,
      'true is not defined',
    ],
    [circuitBreakerError, around(DEEP, 'NetworkErrorRatio() > 1'), 'expected int, got int'],
    [circuitBreakerError, around(TOO_DEEP, 'NetworkErrorRatio() > 0.5'), LIMIT_ERROR],
    // measured on Traefik 3.7.15: the first two enabled, the others disabled with these errors
    [tcpRuleError, around(DEEP, 'HostSNI(`a.test`)'), null],
    [tcpRuleError, `${'!'.repeat(DEEP)}HostSNI(\`a.test\`)`, null],
    [tcpRuleError, around(DEEP, 'HostSNI(`a b`)'), 'invalid value for HostSNI matcher, "a b" is not a valid hostname'],
    [tcpRuleError, around(TOO_DEEP, 'HostSNI(`a.test`)'), LIMIT_ERROR],
    [tcpRuleError, `${'ALPN(`h2`) && !('.repeat(DEEP)}HostSNI(\`a.test\`)${')'.repeat(DEEP)}`, null],
  ];
  for (const [check, text, error] of cases) t.is(check(text), error, `${check.name} ${text.slice(0, 40)}…`);
});

/** The app on a real socket, and a JSON client for it. */
async function serve(app: FastifyInstance) {
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const send = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(base + url, {
      method,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json().catch(() => null)) as any };
  };
  return { base, send };
}

test('POST /api/middlewares: a retryExpression or circuitBreaker expression 20,000 levels deep is created, past the limit 422', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const { send } = await serve(app);
  for (const [type, field, inner] of [
    ['buffering', 'retryExpression', 'IsNetworkError()'],
    ['circuitBreaker', 'expression', 'NetworkErrorRatio() > 0.5'],
  ]) {
    const created = await send('POST', '/api/middlewares', {
      name: `deep ${type}`,
      type,
      config: { [field]: around(DEEP, inner) },
    });
    t.is(created.status, 201, `${type}: ${JSON.stringify(created.body).slice(0, 200)}`);
    const read = await send('GET', `/api/middlewares/${created.body.id}`);
    t.is(read.body.config[field], around(DEEP, inner));

    const refused = await send('POST', '/api/middlewares', {
      name: `too deep ${type}`,
      type,
      config: { [field]: around(TOO_DEEP, inner) },
    });
    t.is(refused.status, 422, `${type}: ${JSON.stringify(refused.body).slice(0, 200)}`);
    t.is(refused.body.id, 'validation_failed');
    t.is(refused.body.details[0].path, `/config/${field}`);
    t.true(refused.body.details[0].message.includes(LIMIT_ERROR), refused.body.details[0].message);
  }
  t.is((await send('GET', '/api/health')).status, 200);
});

/**
 * sni_rule holds at most 1024 characters (model/resource-config.ts), checked before the rule by the
 * API, the import and a hand edit: the deepest rule that reaches tcpRuleError there is ~500 levels
 * (1024 characters); deeper ones are refused by length, never a 5xx or a stopped watcher.
 */
const host = 'HostSNI(`cloud.example.com`)';
const LONGEST = (1024 - host.length) / 2; // 498 levels: 1024 characters

test('the middleware-manager import (dry run and run): a 1024-character rule 498 levels deep is imported, 20,000 levels are skipped', async (t) => {
  const { app } = await harness(t);
  const { base, send } = await serve(app);
  const longest = around(LONGEST, host);
  t.is(longest.length, 1024);
  const bytes = await mmDatabase({
    legacy: true,
    middlewares: [],
    resources: [
      { id: '1-Nextcloud-router', host: 'cloud.example.com', tcp_enabled: 1, tcp_sni_rule: longest },
      { id: '2-Grafana-router', host: 'grafana.example.com', tcp_enabled: 1, tcp_sni_rule: around(DEEP, host) },
      {
        id: '3-wiki-router',
        host: 'wiki.example.com',
        tcp_enabled: 1,
        tcp_sni_rule: around(LONGEST, 'HostSNI(`a b`)'),
      },
    ],
  });
  const importDb = async (query: string) => {
    const response = await fetch(`${base}/api/import/middleware-manager${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  for (const query of ['?dry_run=true', '']) {
    const reply = await importDb(query);
    t.is(reply.status, 200, `${query}: ${JSON.stringify(reply.body).slice(0, 300)}`);
    const reasons = Object.fromEntries(
      reply.body.skipped.map((s: { name: string; reason: string }) => [s.name, s.reason]),
    );
    t.regex(reasons[`${GRAFANA} tcp`] ?? '', /^tcp\/sni_rule must NOT have more than 1024 characters/, query);
    t.regex(
      reasons[`${WIKI} tcp`] ?? JSON.stringify(reasons).slice(0, 300),
      /is not a TCP rule Traefik can build: invalid value for HostSNI matcher, "a b" is not a valid hostname/,
      query,
    );
    t.deepEqual(
      reply.body.created.overrides
        .filter((o: { kind: string }) => o.kind === 'tcp')
        .map((o: { resource_id: string; kind: string }) => `${o.resource_id} ${o.kind}`),
      [`${NEXTCLOUD} tcp`],
      query,
    );
  }
  const nextcloud = await send('GET', `/api/resources/${NEXTCLOUD}`);
  t.is(nextcloud.body.config.tcp.sni_rule, longest);
  t.is((await send('GET', '/api/health')).status, 200);
});

test('a hand-edited resource file: a rule 20,000 levels deep is an invalid edit, 498 levels are served; the watcher goes on', async (t) => {
  const { app, dataDir } = await harness(t);
  const { send } = await serve(app);
  const put = await send('PUT', `/api/resources/${NEXTCLOUD}/config/tcp`, {
    enabled: true,
    sni_rule: 'HostSNI(`*.example.com`)',
  });
  t.is(put.status, 200, JSON.stringify(put.body));
  const file = path.join(dataDir, 'resources', `${NEXTCLOUD}.yaml`);
  const original = await readFile(file, 'utf8');
  const withRule = (rule: string) => original.replace('HostSNI(`*.example.com`)', rule);
  const invalidEdit = () => waitFor(() => app.store.invalidFiles().find((f) => f.path === file) ?? null, 1_000);

  await writeFile(file, withRule(around(DEEP, host)));
  t.regex((await invalidEdit()).message, /sni_rule: must NOT have more than 1024 characters/);
  await writeFile(file, withRule(around(LONGEST, 'HostSNI(`a b`)')));
  const bad = await waitFor(
    () => app.store.invalidFiles().find((f) => f.path === file && f.message.includes('not a valid hostname')) ?? null,
    1_000,
  );
  t.regex(bad.message, /is not a TCP rule Traefik can build: invalid value for HostSNI matcher/);
  t.is((await send('GET', `/api/resources/${NEXTCLOUD}`)).body.config.tcp.sni_rule, 'HostSNI(`*.example.com`)');

  const longest = around(LONGEST, host);
  await writeFile(file, withRule(longest));
  const served = await waitFor(async () => {
    const view = await send('GET', `/api/resources/${NEXTCLOUD}`);
    return view.body.config.tcp.sni_rule === longest ? view.body : null;
  }, 1_000);
  t.is(served.config.tcp.enabled, true);
  t.is(
    app.store.invalidFiles().find((f) => f.path === file),
    undefined,
  );
  t.is((await send('GET', '/api/health')).status, 200);
});

test('a hand-edited middleware file: a circuitBreaker expression past the limit is an invalid edit, 20,000 levels are served', async (t) => {
  const app = await build(t, { config: { auth: { mode: 'off' } } });
  const { send } = await serve(app);
  const dir = path.join(app.store.dataDir, 'middlewares');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'breaker.yaml');
  const withExpression = (expression: string) =>
    `name: Breaker\ntype: circuitBreaker\nconfig:\n  expression: ${JSON.stringify(expression)}\n`;

  await writeFile(file, withExpression(around(TOO_DEEP, 'NetworkErrorRatio() > 0.5')));
  const invalid = await waitFor(() => app.store.invalidFiles().find((f) => f.path === file) ?? null, 1_000);
  t.true(invalid.message.includes(LIMIT_ERROR), invalid.message.slice(0, 200));
  t.is((await send('GET', '/api/middlewares/breaker')).status, 404);

  const deep = around(DEEP, 'NetworkErrorRatio() > 0.5');
  await writeFile(file, withExpression(deep));
  const served = await waitFor(async () => {
    const reply = await send('GET', '/api/middlewares/breaker');
    return reply.status === 200 ? reply.body : null;
  }, 1_000);
  t.is(served.config.expression, deep);
  t.is((await send('GET', '/api/health')).status, 200);
});
