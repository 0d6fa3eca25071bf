/**
 * A resource's tcp.sni_rule Traefik 3.7.15 cannot parse or build disables its TCP router; such rules
 * are refused with 422 at /sni_rule, held back from a hand edit and skipped by the import. Each rule
 * below was measured on the binary (63 rules agree; the parse errors are Go's parser.ParseExpr text, and
 * the case forms, literals and operators added with the shared Go parser were measured on 3.7.15).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { tcpRuleError } from '../../model/tcp-rule.ts';
import { mmDatabase } from '../import/mm-db.ts';
import { waitFor } from '../helpers/wait.ts';
import { assertClientError, call, harness, NEXTCLOUD } from './support.ts';

const REFUSED: Array<[string, string]> = [
  ['garbage', 'garbage is not defined'],
  ['Host(`a.test`)', 'unsupported function: Host'],
  ['HostSNI(`a.test`) and ALPN(`h2`)', "1:19: expected 'EOF', found and"],
  ['HostSNI(`a.test`) &&', "1:21: expected operand, found 'EOF'"],
  ['HostSNI(`a.test`)\n&& ALPN(`h2`)', "2:1: expected 'EOF', found '&&'"],
  ["HostSNI('a.test')", '1:9: illegal rune literal'],
  // pkg/rules registers each matcher as written, lower, UPPER and Title case only
  ['hostSNI(`a.test`)', 'unsupported function: hostSNI'],
  ['HostSni(`a.test`)', 'unsupported function: HostSni'],
  ['`a.test`', 'error while parsing rule `a.test`'],
  ['HostSNI(`a`) == HostSNI(`b`)', '== is not supported'],
  ['HostSNI(1)', 'reflect: cannot use int as type string in Call'],
  ['HostSNI(`a.test`) && `x`', 'reflect: Call using string as type rules.TreeBuilder'],
  ['HostSNI()', 'no args for matcher HostSNI'],
  ['HostSNI(``)', 'empty args for matcher HostSNI'],
  ['HostSNI(`a.test`, `b.test`)', 'unexpected number of parameters; got 2, expected 1'],
  ['HostSNI(`a b`)', 'invalid value for HostSNI matcher, "a b" is not a valid hostname'],
  ['HostSNI(`*.*.test`)', 'invalid value for HostSNI matcher, "*.*.test" is not a valid hostname'],
  ['HostSNI(`[::1]`)', 'invalid value for HostSNI matcher, "[::1]" is not a valid hostname'],
  [
    'HostSNIRegexp(`^(?=a).test$`)',
    'compiling HostSNIRegexp matcher: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
  ],
  [
    'HostSNI(`a.test`) || ClientIP(`10.0.0.1/33`)',
    'initializing IP checker for ClientIP matcher: invalid CIDR address: 10.0.0.1/33',
  ],
  ['ALPN(`acme-tls/1`)', 'invalid protocol value for ALPN matcher, "acme-tls/1" is not allowed'],
];
const ACCEPTED = [
  'HostSNI(`*`)',
  'HostSNI(`*.test`)',
  'hostsni(`A.TEST`)',
  'HostSNI(`a_b.test:443`)',
  'HostSNI(`::1`)',
  'HostSNI("a\\x41.test")',
  'HostSNI(\n`a.test`,)',
  'HostSNI(`a.test`)  ',
  'HOSTSNI(`a.test`) || Hostsni(`b.test`) || clientip(`10.0.0.0/8`) || Hostsniregexp(`a`)',
  'HostSNI(`a.test`) // a comment',
  '(HostSNI(`a.test`)) && !!(ALPN(`h2`) || ALPN(`ACME-TLS/1`))',
  '!HostSNI(`a.test`) || ClientIP(`10.0.0.0/8`)',
  'HostSNIRegexp(`{sub:[a-z]+}.test`)',
  'HostSNIRegexp(`^[a-z]+\\.test$`)',
];

test('TCP rules as Traefik 3.7.15 parses and builds them', (t) => {
  for (const [rule, error] of REFUSED) t.is(tcpRuleError(rule), error, rule);
  for (const rule of ACCEPTED) t.is(tcpRuleError(rule), null, rule);
});

test.serial(
  'PUT /config/tcp refuses an sni_rule Traefik cannot build; a hand edit holding one is invalid',
  async (t) => {
    const { app, dataDir } = await harness(t);
    const url = `/api/resources/${NEXTCLOUD}/config/tcp`;
    const bad = await call(app, { method: 'PUT', url, payload: { enabled: true, sni_rule: 'HostSNI(`a b`)' } });
    assertClientError(t, bad, 422, 'validation_failed');
    t.is(bad.body.details[0].path, '/sni_rule');
    t.regex(bad.body.details[0].message, /"a b" is not a valid hostname/);
    const ok = await call(app, {
      method: 'PUT',
      url,
      payload: { enabled: true, sni_rule: 'HostSNI(`*.example.com`)' },
    });
    t.is(ok.status, 200, JSON.stringify(ok.body));

    const file = path.join(dataDir, 'resources', `${NEXTCLOUD}.yaml`);
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace('HostSNI(`*.example.com`)', 'Host(`cloud.example.com`)'),
    );
    const invalid = await waitFor(() => app.store.invalidFiles().find((f) => f.path === file) ?? null, 1_000);
    t.regex(invalid.message, /unsupported function: Host/);
    const view = (await call(app, { url: `/api/resources/${NEXTCLOUD}` })).body;
    t.is(view.config.tcp.sni_rule, 'HostSNI(`*.example.com`)');
  },
);

test.serial('the middleware-manager import skips a tcp_sni_rule Traefik cannot build', async (t) => {
  const { app } = await harness(t);
  const bytes = await mmDatabase({
    legacy: true,
    middlewares: [],
    resources: [
      {
        id: '2-Grafana-router',
        host: 'grafana.example.com',
        tcp_enabled: 1,
        tcp_sni_rule: 'Host(`grafana.example.com`)',
      },
    ],
  });
  const reply = await call(app, {
    method: 'POST',
    url: '/api/import/middleware-manager',
    headers: { 'content-type': 'application/octet-stream' },
    payload: bytes,
  });
  t.is(reply.status, 200, reply.raw);
  const skipped = reply.body.skipped.find((s: { name: string }) => s.name === '2-grafana-router tcp');
  t.regex(
    skipped?.reason ?? JSON.stringify(reply.body.skipped),
    /not a TCP rule Traefik can build: unsupported function: Host/,
  );
  t.deepEqual(reply.body.created.overrides, []);
});
