/**
 * The findings of API.md §4.19 (model/live/findings.ts) from readings shaped like the real
 * Traefik 3.7.15 API: each kind, what it names, and what it leaves to another finding.
 */
import test from 'ava';
import { expectDocument } from '../../model/live/compare.ts';
import { droppedKeyFindings, instanceFindings, ruleHosts, type FindingInput } from '../../model/live/findings.ts';
import type { Finding, TraefikObject } from '../../model/live/types.ts';
import type { JsonObject } from '../../model/types.ts';
import { reading, reported, reportedDocument, service, unreachable } from './model-readings.ts';

const SERVED = {
  http: {
    routers: {
      app: {
        entryPoints: ['websecure'],
        middlewares: ['badger', 'crowdsec@file'],
        rule: 'Host(`app.example.com`)',
        service: 'app-service',
        tls: { certResolver: 'letsencrypt' },
      },
      blog: { entryPoints: ['websecure'], rule: 'Host(`blog.example.com`)', service: 'blog-service', tls: {} },
    },
    services: {
      'app-service': { loadBalancer: { servers: [{ url: 'http://10.0.0.1:80' }] } },
      'blog-service': { loadBalancer: { servers: [{ url: 'http://10.0.0.2:80' }] } },
    },
  },
} as JsonObject;

const ROUTER_OF = new Map([
  ['1-app-router', 'app@http'],
  ['2-blog-router', 'blog@http'],
]);

const DOC = expectDocument(SERVED, '"e2"', 2000);

function findings(fields: Partial<FindingInput> & Pick<FindingInput, 'reading'>): Finding[] {
  return instanceFindings({
    document: 'current',
    latest: DOC,
    taken: DOC,
    routerOf: ROUTER_OF,
    versionKnown: true,
    ...fields,
  });
}

const kinds = (list: Finding[]) => list.map((f) => f.kind);
const byKind = (list: Finding[], kind: string) => list.filter((f) => f.kind === kind);

/** A healthy instance running SERVED, with its services. */
function healthy(extra: Parameters<typeof reading>[0] = {}) {
  return reading({
    routers: reportedDocument(SERVED),
    services: [
      service('app-service@http', ['http://10.0.0.1:80'], ['app@http']),
      service('blog-service@http', ['http://10.0.0.2:80'], ['blog@http']),
    ],
    ...extra,
  });
}

test('a healthy instance running our document has no finding', (t) => {
  t.deepEqual(findings({ reading: healthy() }), []);
});

test('traefik_unreachable: the only finding, naming the error and every resource', (t) => {
  const list = findings({
    reading: unreachable('connect ECONNREFUSED 127.0.0.1:8080'),
    document: 'unknown',
    versionKnown: false,
  });
  t.is(list.length, 1);
  t.like(list[0], {
    id: 'traefik_unreachable:traefik:instance',
    severity: 'error',
    kind: 'traefik_unreachable',
    resources: ['1-app-router', '2-blog-router'],
  });
  t.true(list[0].message.includes('connect ECONNREFUSED 127.0.0.1:8080'));
});

test('version_unknown: a warning when reachable and the version is not known', (t) => {
  const list = findings({ reading: healthy({ version: null }), versionKnown: false });
  t.deepEqual(kinds(list), ['version_unknown']);
  t.like(list[0], { id: 'version_unknown:traefik:instance', severity: 'warning' });
  t.true(list[0].fix.includes('proxy.traefik_version'));
  t.false(list[0].message.includes('('), list[0].message);
});

test('version_unknown: names why /api/version did not read, and the router to api@internal in its fix', (t) => {
  const error = 'Traefik answered HTTP 404 Not Found for GET http://127.0.0.1:8080/api/version';
  const list = findings({ reading: { ...healthy({ version: null }), version_error: error }, versionKnown: false });
  t.deepEqual(kinds(list), ['version_unknown']);
  t.true(list[0].message.includes(`(${error})`), list[0].message);
  t.regex(list[0].fix, /proxy\.traefik_version .*api@internal must let it through/);
  // the setting decides: no finding, whatever /api/version answered
  t.deepEqual(findings({ reading: { ...healthy({ version: null }), version_error: error }, versionKnown: true }), []);
});

test('document_behind: names the keys new since the document it took and the resources whose routers changed', (t) => {
  const taken = expectDocument(SERVED, '"e1"', 1000);
  const latestConfig = structuredClone(SERVED);
  const http = latestConfig.http as { routers: Record<string, JsonObject>; services: Record<string, JsonObject> };
  (http.services['blog-service'].loadBalancer as JsonObject).passiveHealthCheck = { maxFailedAttempts: 3 };
  http.routers.blog = { ...http.routers.blog, priority: 50 };
  const latest = expectDocument(latestConfig, '"e2"', 2000);
  const list = findings({ reading: healthy(), document: 'behind', latest, taken });
  t.deepEqual(kinds(list), ['document_behind']);
  t.like(list[0], { id: 'document_behind:traefik:instance', severity: 'error', resources: ['2-blog-router'] });
  t.true(
    list[0].message.includes(
      'Keys new since the last document it took: http.routers.blog.priority, http.services.blog-service.loadBalancer.passiveHealthCheck.',
    ),
    list[0].message,
  );
  t.true(list[0].fix.includes('proxy.traefik_version'));
  // never took one of ours: every resource, no key list
  const never = findings({ reading: healthy(), document: 'behind', latest, taken: null });
  t.deepEqual(never[0].resources, ['1-app-router', '2-blog-router']);
  t.true(never[0].message.includes('runs none of our documents'));
  t.false(never[0].message.includes('Keys new'));
  // not behind: no finding
  t.deepEqual(findings({ reading: healthy(), document: 'current', latest, taken }), []);
});

/** Traefik's report of a plugin middleware whose plugin it has not loaded. */
const pluginMiddleware = (name: string, plugin: string, usedBy: string[]): TraefikObject => ({
  plugin: { [plugin]: { apiBaseUrl: 'http://pangolin:3001/api/v1' } },
  error: [`plugin: unknown plugin type: ${plugin}`],
  status: 'disabled',
  type: plugin,
  usedBy,
  name,
  provider: name.slice(name.indexOf('@') + 1),
});

test('plugins_disabled: one finding per instance naming the plugins, their middlewares and the vendoring fix; the routers they disable add none', (t) => {
  const routers = reportedDocument(SERVED).map((router) =>
    router.name === 'app@http'
      ? { ...router, status: 'disabled', error: ['plugin: unknown plugin type: badger'] }
      : router,
  );
  const middlewares = [
    pluginMiddleware('badger@http', 'badger', ['app@http']),
    // a file-provider plugin middleware used by our router: reported too
    {
      ...pluginMiddleware('crowdsec@file', 'bouncer', ['app@http']),
      error: ['invalid middleware type or middleware does not exist'],
    },
    // another provider's plugin middleware no router of ours uses: not ours to report
    pluginMiddleware('other@docker', 'geoblock', ['x@docker']),
  ];
  const list = findings({ reading: healthy({ routers, middlewares }) });
  t.deepEqual(kinds(list), ['plugins_disabled']);
  t.like(list[0], {
    id: 'plugins_disabled:traefik:instance',
    severity: 'error',
    resources: ['1-app-router'],
    middlewares: ['badger@http', 'crowdsec@file'],
  });
  t.true(list[0].message.includes('plugins badger, bouncer'), list[0].message);
  t.true(list[0].fix.includes('POST /api/plugins/badger/vendor'), list[0].fix);
  t.true(list[0].fix.includes('§4.20'));
  t.true(list[0].fix.includes('restart Traefik'));
});

test('plugins_disabled: a local plugin disabled beside remote ones names the remote ones to vendor (a download failed at start), not the local one', (t) => {
  const routers = reportedDocument(SERVED).map((router) =>
    router.name === 'app@http'
      ? {
          ...router,
          status: 'disabled',
          error: [
            'invalid middleware "badger@http" configuration: invalid middleware type or middleware does not exist',
          ],
        }
      : router,
  );
  // Traefik 3.7 after a failed download: every plugin middleware fails, the local badger included
  const middlewares = [
    {
      ...pluginMiddleware('badger@http', 'badger', ['app@http']),
      error: ['invalid middleware "badger@http" configuration: invalid middleware type or middleware does not exist'],
    },
  ];
  const declaredPlugins = { remote: ['stamp', 'bouncer'], local: ['badger'] };
  const [offline] = findings({ reading: healthy({ routers, middlewares }), declaredPlugins });
  t.like(offline, { kind: 'plugins_disabled', middlewares: ['badger@http'], resources: ['1-app-router'] });
  t.true(offline.message.includes('experimental.plugins (bouncer, stamp)'), offline.message);
  t.true(offline.fix.includes('POST /api/plugins/bouncer/vendor, POST /api/plugins/stamp/vendor'), offline.fix);
  t.false(offline.fix.includes('badger'), offline.fix);
  // a remote plugin Traefik lacks (installed, not restarted): that one, as without the static config
  const [remote] = findings({
    reading: healthy({ routers, middlewares: [pluginMiddleware('badger@http', 'stamp', ['app@http'])] }),
    declaredPlugins,
  });
  t.true(remote.fix.includes('POST /api/plugins/stamp/vendor'), remote.fix);
  t.false(remote.fix.includes('bouncer'), remote.fix);
  t.false(remote.message.includes('experimental.plugins'), remote.message);
});

test('middleware_error: one per middleware in error, errors verbatim; the router it disables is explained by it', (t) => {
  const error = 'invalid regex: missing closing )';
  const routers = reportedDocument(SERVED).map((router) =>
    router.name === 'blog@http'
      ? {
          ...router,
          middlewares: ['strip@http'],
          status: 'disabled',
          error: [`error building middleware strip@http: ${error}`],
        }
      : router,
  );
  const middlewares = [
    {
      replacePathRegex: { regex: '(' },
      error: [error],
      status: 'disabled',
      usedBy: ['blog@http'],
      name: 'strip@http',
      provider: 'http',
      type: 'replacepathregex',
    },
    { headers: {}, status: 'enabled', usedBy: ['app@http'], name: 'fine@http', provider: 'http', type: 'headers' },
    // not ours and used by none of ours
    { error: ['x'], status: 'disabled', usedBy: ['y@file'], name: 'bad@file', provider: 'file', type: 'headers' },
  ];
  const list = findings({ reading: healthy({ routers, middlewares }) });
  t.deepEqual(kinds(list), ['middleware_error']);
  // Traefik 3.7.15's shape: the router's error is the middleware's build error as is, without its name
  const verbatim = routers.map((router) => (router.name === 'blog@http' ? { ...router, error: [error] } : router));
  t.deepEqual(kinds(findings({ reading: healthy({ routers: verbatim, middlewares }) })), ['middleware_error']);
  t.like(list[0], {
    id: 'middleware_error:traefik:strip@http',
    severity: 'error',
    resources: ['2-blog-router'],
    middlewares: ['strip@http'],
  });
  t.true(list[0].message.includes(error));
});

test('router_disabled: one per disabled router of ours whose errors no other finding explains, errors verbatim (HTTP and TCP)', (t) => {
  const routers = reportedDocument(SERVED).map((router) =>
    router.name === 'app@http'
      ? { ...router, status: 'disabled', error: ['middleware "crowdsec@file" does not exist'] }
      : router,
  );
  const tcpRouters = [
    {
      entryPoints: ['websecure'],
      service: 'db',
      rule: 'HostSNI(`*`)',
      status: 'disabled',
      error: ['the service "db@http" does not exist'],
      name: 'db@http',
      provider: 'http',
    },
    // other providers' disabled routers are not ours to report
    {
      entryPoints: ['websecure'],
      service: 'x',
      rule: 'HostSNI(`*`)',
      status: 'disabled',
      error: ['e'],
      name: 'x@docker',
      provider: 'docker',
    },
  ];
  const list = findings({ reading: healthy({ routers, tcpRouters }) });
  t.deepEqual(
    list.map((f) => [f.kind, f.id, f.resources]),
    [
      ['router_disabled', 'router_disabled:traefik:app@http', ['1-app-router']],
      ['router_disabled', 'router_disabled:traefik:db@http', []],
    ],
  );
  t.true(list[0].message.includes('middleware "crowdsec@file" does not exist'));
  t.deepEqual(list[0].middlewares, ['crowdsec@file']);
});

test('entrypoint_missing: one per entry point our routers use that the instance lacks; the routers it disables add none', (t) => {
  const routers = reportedDocument(SERVED).map((router) =>
    router.name === 'blog@http'
      ? {
          ...router,
          entryPoints: ['tcp-5432'],
          status: 'disabled',
          error: ['entryPoint "tcp-5432" doesn\'t exist', 'no valid entryPoint for this router'],
        }
      : router,
  );
  const udpRouters = [
    {
      entryPoints: ['udp-53'],
      service: 'dns',
      status: 'disabled',
      error: ['entryPoint "udp-53" doesn\'t exist', 'no valid entryPoint for this router'],
      name: 'dns@http',
      provider: 'http',
    },
  ];
  const list = findings({ reading: healthy({ routers, udpRouters }) });
  t.deepEqual(
    list.map((f) => [f.id, f.severity, f.resources]),
    [
      ['entrypoint_missing:traefik:tcp-5432', 'error', ['2-blog-router']],
      ['entrypoint_missing:traefik:udp-53', 'error', []],
    ],
  );
  t.true(list[0].fix.includes('POST /api/static/entrypoints/sync'));
  t.true(list[0].fix.includes('§4.20'));
  // a router with a missing entry point AND another error is still reported
  const both = routers.map((router) =>
    router.name === 'blog@http'
      ? { ...router, error: [...(router.error as string[]), 'the service "x@http" does not exist'] }
      : router,
  );
  t.deepEqual(kinds(findings({ reading: healthy({ routers: both }) })), ['router_disabled', 'entrypoint_missing']);
});

test("Pangolin's redirect companion (<router>-redirect@http) counts for its router's resource", (t) => {
  const redirect = {
    entryPoints: ['http-80'],
    rule: 'Host(`app.example.com`)',
    service: 'app-service',
    middlewares: ['redirect-to-https@http'],
    status: 'disabled',
    error: ['entryPoint "http-80" doesn\'t exist', 'no valid entryPoint for this router'],
    name: 'app-redirect@http',
    provider: 'http',
  };
  const list = findings({ reading: healthy({ routers: [...reportedDocument(SERVED), redirect] }) });
  t.deepEqual(
    list.map((f) => [f.id, f.resources]),
    [['entrypoint_missing:traefik:http-80', ['1-app-router']]],
  );
});

test('service_no_servers: a used service of ours with no server or every server DOWN', (t) => {
  const services = [
    service('app-service@http', [], ['app@http']),
    service('blog-service@http', ['http://10.0.0.2:80', 'http://10.0.0.3:80'], ['blog@http'], {
      'http://10.0.0.2:80': 'DOWN',
      'http://10.0.0.3:80': 'DOWN',
    }),
    // one server up: fine
    service('half@http', ['http://a', 'http://b'], ['blog@http'], { 'http://a': 'DOWN', 'http://b': 'UP' }),
    // used by no router, or not ours: not reported
    service('unused@http', [], []),
    service('theirs@docker', [], ['x@docker']),
  ];
  const list = findings({ reading: healthy({ services }) });
  t.deepEqual(
    list.map((f) => [f.id, f.resources]),
    [
      ['service_no_servers:traefik:app-service@http', ['1-app-router']],
      ['service_no_servers:traefik:blog-service@http', ['2-blog-router']],
    ],
  );
  t.true(list[1].message.includes('DOWN'));
  t.true(list[1].fix.includes('health check'));
});

test('priority_tie: routers sharing an entry point, priority and a Host, grouped once per set of routers', (t) => {
  const appRule = 'Host(`app.example.com`)';
  const routers = [
    ...reportedDocument(SERVED),
    // same host (another case), same priority (Traefik's default: the rule length), same entry point: a tie
    reported('app', { entryPoints: ['websecure'], rule: 'Host(`APP.example.com`)', service: 'whoami' }, 'docker'),
    // a pair tying on two entry points and two hosts: still one finding
    reported('m', {
      entryPoints: ['web', 'websecure'],
      rule: 'Host(`m.test`) || Host(`n.test`)',
      service: 'x',
      priority: 7,
    }),
    reported(
      'm',
      { entryPoints: ['web', 'websecure'], rule: 'Host(`n.test`) || Host(`m.test`)', service: 'x', priority: 7 },
      'docker',
    ),
    // same host, other entry point: no tie
    reported('app-web', { entryPoints: ['web'], rule: appRule, service: 'x' }, 'file'),
    // same host, other priority: no tie
    reported('app-hi', { entryPoints: ['websecure'], rule: appRule, service: 'x', priority: 1000 }, 'file'),
    // disabled: no tie
    { ...reported('app-off', { entryPoints: ['websecure'], rule: appRule, service: 'x' }, 'file'), status: 'disabled' },
    // two routers of another provider tie: not ours to report
    reported('w1', { entryPoints: ['websecure'], rule: 'Host(`w.test`)', service: 'x' }, 'docker'),
    reported('w2', { entryPoints: ['websecure'], rule: 'Host(`w.test`)', service: 'x' }, 'docker'),
    // v2-style list and || : blog.example.com overlaps blog@http at priority 30 when set so
    reported(
      'multi',
      {
        entryPoints: ['websecure'],
        rule: 'Host(`blog.example.com`) || Host(`z.test`)',
        service: 'x',
        priority: 'Host(`blog.example.com`)'.length,
      },
      'file',
    ),
  ];
  const list = findings({ reading: healthy({ routers }) });
  t.deepEqual(
    list.map((f) => [f.id, f.severity, f.resources]),
    [
      ['priority_tie:traefik:app@docker,app@http', 'warning', ['1-app-router']],
      ['priority_tie:traefik:blog@http,multi@file', 'warning', ['2-blog-router']],
      ['priority_tie:traefik:m@docker,m@http', 'warning', []],
    ],
  );
  t.true(
    list[2].message.includes('Host m.test, n.test on entry point web, websecure with priority 7'),
    list[2].message,
  );
  t.true(list[0].message.includes('app.example.com'));
  t.true(list[0].message.includes(`priority ${appRule.length}`));
  // a third router on the same slot joins the same group (one finding, three routers)
  const third = reported('app', { entryPoints: ['websecure'], rule: appRule, service: 'y' }, 'file');
  const grown = byKind(findings({ reading: healthy({ routers: [...routers, third] }) }), 'priority_tie');
  t.deepEqual(grown[0].id, 'priority_tie:traefik:app@docker,app@file,app@http');
});

test('priority_tie among many routers on one host (keyed, not pairwise): only the routers that tie', (t) => {
  // 20 routers of another provider on app.example.com with distinct priorities, one of them equal to ours
  const appRule = 'Host(`app.example.com`)';
  const others = Array.from({ length: 20 }, (_, i) =>
    reported(
      `p${i}`,
      {
        entryPoints: ['websecure'],
        rule: `${appRule} && PathPrefix(\`/p${i}\`)`,
        service: 'x',
        priority: i === 7 ? appRule.length : 1000 + i,
      },
      'file',
    ),
  );
  const list = byKind(
    findings({ reading: healthy({ routers: [...reportedDocument(SERVED), ...others] }) }),
    'priority_tie',
  );
  t.deepEqual(
    list.map((f) => [f.id, f.resources]),
    [['priority_tie:traefik:app@http,p7@file', ['1-app-router']]],
  );
});

test('ruleHosts: literal hosts of Host matchers only', (t) => {
  t.deepEqual(ruleHosts('Host(`a.test`) || Host(`B.test`)'), ['a.test', 'b.test']);
  t.deepEqual(ruleHosts('Host(`a.test`, "c.test") && PathPrefix(`/x`)'), ['a.test', 'c.test']);
  t.deepEqual(ruleHosts('HostRegexp(`.+`) || HostSNI(`x`) || !Host(`n.test`)'), []);
  t.deepEqual(ruleHosts('PathPrefix(`/`)'), []);
});

test('ids are stable while a finding persists: the same reading gives the same ids, another subject another id', (t) => {
  const services = [service('app-service@http', [], ['app@http'])];
  const first = findings({ reading: healthy({ services }) });
  const again = findings({ reading: healthy({ services, version: '3.7.15' }) });
  t.deepEqual(
    again.map((f) => f.id),
    first.map((f) => f.id),
  );
  const other = findings({ reading: healthy({ services, source: 'edge-2' }) });
  t.is(other[0].id, 'service_no_servers:edge-2:app-service@http');
});

test('droppedKeyFindings: one warning per key and min_version, listing paths and the resources concerned', (t) => {
  const dropped = [
    { path: '/tcp/services/a/loadBalancer', key: 'sticky', min_version: null },
    { path: '/tcp/services/b/loadBalancer', key: 'sticky', min_version: null },
    { path: '/http/services/app-service/loadBalancer', key: 'passiveHealthCheck', min_version: '3.6.0' },
    { path: '/http/routers/blog/observability', key: 'traceVerbosity', min_version: '3.5.0' },
  ];
  const list = droppedKeyFindings(dropped, ROUTER_OF, DOC);
  t.deepEqual(
    list.map((f) => [f.id, f.severity, f.resources]),
    [
      ['keys_dropped:version-gate:sticky:none', 'warning', []],
      ['keys_dropped:version-gate:passiveHealthCheck:3.6.0', 'warning', ['1-app-router']],
      ['keys_dropped:version-gate:traceVerbosity:3.5.0', 'warning', ['2-blog-router']],
    ],
  );
  t.true(list[0].message.includes('/tcp/services/a/loadBalancer/sticky, /tcp/services/b/loadBalancer/sticky'));
  t.true(list[0].message.includes('No Traefik version'));
  t.true(list[1].fix.includes('Upgrade Traefik to 3.6.0'));
  // without the document, service paths map to no resource; router paths still do
  t.deepEqual(
    droppedKeyFindings(dropped, ROUTER_OF).map((f) => f.resources),
    [[], [], ['2-blog-router']],
  );
  t.deepEqual(droppedKeyFindings([], ROUTER_OF), []);
});
