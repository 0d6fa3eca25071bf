/**
 * The pure comparison of API.md §4.19 (model/live/compare.ts) against readings shaped like the real
 * Traefik 3.7.15 API: what Traefik fills in by itself is no difference, every field we set is.
 */
import test from 'ava';
import {
  expectDocument,
  traefikDigest,
  instanceStates,
  newKeys,
  resourceRouterName,
  runsDocument,
  worstState,
  type ExpectedRouter,
} from '../../model/live/compare.ts';
import { parseLossless } from '../../model/lossless-json.ts';
import type { JsonObject } from '../../model/types.ts';
import type { TraefikObject } from '../../model/live/types.ts';
import { objectsOf, reading, reported, reportedDocument, unreachable } from './model-readings.ts';

/** The served document of API.md §4.9's worked example. */
const SERVED = {
  http: {
    middlewares: { authelia: { forwardAuth: { address: 'http://authelia:9091' } } },
    routers: {
      '1-app-router': {
        entryPoints: ['websecure'],
        middlewares: ['1-app-router_headers', 'authelia', 'crowdsec@file', 'rate-limit', 'badger'],
        priority: 500,
        rule: 'Host(`app.example.com`)',
        service: 'app-v2',
        tls: { certResolver: 'letsencrypt' },
      },
      '1-app-router-redirect': {
        entryPoints: ['web'],
        middlewares: ['redirect-to-https'],
        rule: 'Host(`app.example.com`)',
        service: '1-app-service',
      },
    },
  },
} as JsonObject;

const ROUTER_OF = new Map([
  ['1-app-router', '1-app-router@http'],
  ['1-app-router-redirect', '1-app-router-redirect@http'],
]);

const clone = <T>(value: T): T => structuredClone(value);

/** SERVED with one router's fields replaced. */
function servedWith(key: string, fields: JsonObject): JsonObject {
  const config = clone(SERVED);
  const routers = (config.http as JsonObject).routers as Record<string, JsonObject>;
  routers[key] = { ...routers[key], ...fields };
  return config;
}

/** Traefik's list for SERVED, one router's reported fields replaced. */
function reportedWith(name: string, fields: TraefikObject): TraefikObject[] {
  return reportedDocument(SERVED).map((router) => (router.name === name ? { ...router, ...fields } : router));
}

test('a document Traefik took is live even though Traefik fills in entry points, priority and TLS options', (t) => {
  const doc = expectDocument(SERVED, '"e1"', 1000);
  const routers = reportedDocument(SERVED);
  // what Traefik really fills in: the redirect router gets priority = rule length, TLS options "default"
  t.is(routers[1].priorityStr, String('Host(`app.example.com`)'.length));
  t.deepEqual(routers[0].tls, { certResolver: 'letsencrypt', options: 'default' });
  t.deepEqual(routers[0].middlewares, [
    '1-app-router_headers@http',
    'authelia@http',
    'crowdsec@file',
    'rate-limit@http',
    'badger@http',
  ]);
  const instance = reading({
    routers: [...routers, reported('dashboard', { rule: 'PathPrefix(`/api`)', service: 'api@internal' }, 'internal')],
    ...objectsOf(SERVED),
  });
  t.true(runsDocument(instance, doc));
  t.deepEqual(Object.fromEntries(instanceStates(instance, [doc], ROUTER_OF)), {
    '1-app-router': { state: 'live', errors: [] },
    '1-app-router-redirect': { state: 'live', errors: [] },
  });
});

test('defaults: a router without entry points, priority or tls options matches what Traefik reports for it', (t) => {
  const config = { http: { routers: { r: { rule: 'Host(`r.test`)', service: 's', tls: {} } } } };
  const doc = expectDocument(config, 'e', 1);
  const router = reported('r', config.http.routers.r);
  t.deepEqual(router.entryPoints, ['web', 'websecure']);
  t.is(router.priority, 'Host(`r.test`)'.length);
  t.deepEqual(router.tls, { options: 'default' });
  t.is(instanceStates(reading({ routers: [router] }), [doc], new Map([['r', 'r@http']])).get('r')?.state, 'live');
  // priority 0 is no priority: Traefik computes it from the rule length
  const zero = expectDocument({ http: { routers: { r: { ...config.http.routers.r, priority: 0 } } } }, 'e', 1);
  t.is(instanceStates(reading({ routers: [router] }), [zero], new Map([['r', 'r@http']])).get('r')?.state, 'live');
  // but TLS itself is compared: Traefik without TLS for this router runs something else
  const { tls: _tls, ...plain } = router;
  t.is(instanceStates(reading({ routers: [plain] }), [doc], new Map([['r', 'r@http']])).get('r')?.state, 'outdated');
});

test('a BigInt priority is compared digit for digit through priorityStr', (t) => {
  // our document holds a priority above 2^53 (lossless JSON keeps it as BigInt)
  const served = parseLossless(
    '{"http":{"routers":{"r":{"rule":"Host(`r.test`)","service":"s","priority":9223372036854775807}}}}',
  ) as JsonObject;
  const priority = ((served.http as JsonObject).routers as Record<string, JsonObject>).r.priority;
  t.is(typeof priority, 'bigint');
  const doc = expectDocument(served, 'e', 1);
  // Traefik's answer read with a plain JSON.parse: `priority` is rounded, `priorityStr` is exact
  const body = (priorityStr: string) =>
    JSON.parse(
      `{"entryPoints":["web"],"service":"s","rule":"Host(\`r.test\`)","priority":9223372036854775807,"priorityStr":"${priorityStr}","status":"enabled","using":["web"],"name":"r@http","provider":"http"}`,
    ) as TraefikObject;
  t.is(body('9223372036854775807').priority, Number('9223372036854775807'));
  t.not(String(BigInt(body('9223372036854775807').priority as number)), '9223372036854775807');
  const routerOf = new Map([['r', 'r@http']]);
  t.is(instanceStates(reading({ routers: [body('9223372036854775807')] }), [doc], routerOf).get('r')?.state, 'live');
  t.true(runsDocument(reading({ routers: [body('9223372036854775807')] }), doc));
  // one less: same double, different priority
  const other = instanceStates(reading({ routers: [body('9223372036854775806')] }), [doc], routerOf).get('r');
  t.is(other?.state, 'outdated');
  t.deepEqual(other?.errors, ['Traefik runs another version of this router (differs in priority)']);
  // the same priority as a number or a string in our document
  for (const ours of [14, '14', 14n]) {
    const small = expectDocument(
      { http: { routers: { r: { rule: 'Host(`r.test`)', service: 's', priority: ours } } } },
      'e',
      1,
    );
    t.is(
      instanceStates(reading({ routers: [{ ...body('14'), priority: 14 }] }), [small], routerOf).get('r')?.state,
      'live',
    );
    t.is(
      instanceStates(reading({ routers: [{ ...body('15'), priority: 15 }] }), [small], routerOf).get('r')?.state,
      'outdated',
    );
  }
});

test('service and middlewares compare qualified on both sides; qualified names of other providers stay as they are', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const states = (routers: TraefikObject[]) =>
    instanceStates(reading({ routers }), [doc], ROUTER_OF).get('1-app-router');
  // Traefik lists the service as written, or qualified: both are `app-v2@http`
  t.is(states(reportedWith('1-app-router@http', { service: 'app-v2@http' }))?.state, 'live');
  t.is(states(reportedWith('1-app-router@http', { service: 'app-v2@docker' }))?.state, 'outdated');
  // ours names another provider's service of the same length as `<name>@http`: Traefik's unqualified `app` is app@http
  const fileService = expectDocument(servedWith('1-app-router', { service: 'app@file' }), 'e', 1);
  const reportedApp = reportedWith('1-app-router@http', { service: 'app' });
  t.is(
    instanceStates(reading({ routers: reportedApp }), [fileService], ROUTER_OF).get('1-app-router')?.state,
    'outdated',
  );
  const reportedFile = reportedWith('1-app-router@http', { service: 'app@file' });
  t.is(instanceStates(reading({ routers: reportedFile }), [fileService], ROUTER_OF).get('1-app-router')?.state, 'live');
  // crowdsec@file is not ours: `crowdsec@http` is another middleware
  const middlewares = ['1-app-router_headers@http', 'authelia@http', 'crowdsec@http', 'rate-limit@http', 'badger@http'];
  t.deepEqual(states(reportedWith('1-app-router@http', { middlewares }))?.errors, [
    'Traefik runs another version of this router (differs in middlewares)',
  ]);
});

test('an outdated router: each field we set is compared (middleware order, priority, entry points as a set, TLS)', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const state = (fields: TraefikObject) =>
    instanceStates(reading({ routers: reportedWith('1-app-router@http', fields) }), [doc], ROUTER_OF).get(
      '1-app-router',
    );
  const order = ['authelia@http', '1-app-router_headers@http', 'crowdsec@file', 'rate-limit@http', 'badger@http'];
  t.deepEqual(state({ middlewares: order }), {
    state: 'outdated',
    errors: ['Traefik runs another version of this router (differs in middlewares)'],
  });
  t.is(state({ priority: 100, priorityStr: '100' })?.state, 'outdated');
  t.is(state({ rule: 'Host(`other.example.com`)' })?.state, 'outdated');
  t.is(state({ entryPoints: ['web'] })?.state, 'outdated');
  t.is(state({ entryPoints: ['websecure', 'websecure'] })?.state, 'live');
  t.is(
    state({ tls: { certResolver: 'other', options: 'default' } })?.errors[0],
    'Traefik runs another version of this router (differs in tls.certResolver)',
  );
  t.is(
    state({ tls: { certResolver: 'letsencrypt', options: 'strict' } })?.state,
    'live',
    'options compared only when we set them',
  );
  t.deepEqual(state({ tls: undefined, service: 'old' })?.errors, [
    'Traefik runs another version of this router (differs in service, tls)',
  ]);
  // Traefik's own errors of an enabled router come first, verbatim
  t.deepEqual(state({ service: 'old', error: ['some warning'] })?.errors, [
    'some warning',
    'Traefik runs another version of this router (differs in service)',
  ]);
  // entry points as a set and TLS options when we set them
  const withOptions = expectDocument(
    servedWith('1-app-router', {
      entryPoints: ['websecure', 'web'],
      tls: { certResolver: 'letsencrypt', options: 'strict' },
    }),
    'e',
    1,
  );
  const router = reported('1-app-router', {
    ...((SERVED.http as JsonObject).routers as Record<string, JsonObject>)['1-app-router'],
    entryPoints: ['web', 'websecure'],
    tls: { certResolver: 'letsencrypt', options: 'strict' },
  });
  const one = new Map([['1-app-router', '1-app-router@http']]);
  t.is(instanceStates(reading({ routers: [router] }), [withOptions], one).get('1-app-router')?.state, 'live');
  const defaultOptions = { ...router, tls: { certResolver: 'letsencrypt', options: 'default' } };
  t.is(
    instanceStates(reading({ routers: [defaultOptions] }), [withOptions], one).get('1-app-router')?.state,
    'outdated',
  );
  // TLS domains when we set them
  const domains = [{ main: 'example.com', sans: ['*.example.com'] }];
  const withDomains = expectDocument(
    servedWith('1-app-router', { tls: { certResolver: 'letsencrypt', domains } }),
    'e',
    1,
  );
  const tls = (d: unknown) => [
    { ...reportedDocument(SERVED)[0], tls: { certResolver: 'letsencrypt', domains: d, options: 'default' } },
  ];
  t.is(instanceStates(reading({ routers: tls(domains) }), [withDomains], one).get('1-app-router')?.state, 'live');
  t.is(
    instanceStates(reading({ routers: tls([{ main: 'example.com' }]) }), [withDomains], one).get('1-app-router')?.state,
    'outdated',
  );
});

test('a router of an older document still within the settle time is not outdated; once only the latest is accepted, it is', (t) => {
  const older = expectDocument(SERVED, '"e1"', 1000);
  const latest = expectDocument(servedWith('1-app-router', { service: 'app-v3' }), '"e2"', 2000);
  const instance = reading({ routers: reportedDocument(SERVED), ...objectsOf(SERVED) });
  t.is(instanceStates(instance, [latest, older], ROUTER_OF).get('1-app-router')?.state, 'live');
  t.deepEqual(instanceStates(instance, [latest], ROUTER_OF).get('1-app-router'), {
    state: 'outdated',
    errors: ['Traefik runs another version of this router (differs in service)'],
  });
  // the unchanged router is live either way
  t.is(instanceStates(instance, [latest], ROUTER_OF).get('1-app-router-redirect')?.state, 'live');
  t.true(runsDocument(instance, older));
  t.false(runsDocument(instance, latest));
});

test('missing, disabled and warning routers; Traefik errors verbatim', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const disabled = {
    status: 'disabled',
    error: ['middleware "crowdsec@file" does not exist'],
  };
  const instance = reading({
    routers: [
      { ...reportedDocument(SERVED)[0], ...disabled },
      { ...reportedDocument(SERVED)[1], status: 'warning', error: ['a warning from Traefik'] },
    ],
  });
  const states = instanceStates(instance, [doc], new Map([...ROUTER_OF, ['gone', 'gone@http']]));
  t.deepEqual(states.get('1-app-router'), { state: 'disabled', errors: ['middleware "crowdsec@file" does not exist'] });
  t.deepEqual(states.get('1-app-router-redirect'), { state: 'warning', errors: ['a warning from Traefik'] });
  t.deepEqual(states.get('gone'), { state: 'missing', errors: ['Traefik has no router gone@http'] });
  // a disabled router is disabled even when it also differs
  const changed = reading({ routers: [{ ...reportedDocument(SERVED)[0], ...disabled, service: 'other' }] });
  t.is(instanceStates(changed, [doc], ROUTER_OF).get('1-app-router')?.state, 'disabled');
  // a warning router that differs is outdated (outdated comes before warning)
  const warned = reading({ routers: [{ ...reportedDocument(SERVED)[0], status: 'warning', service: 'other' }] });
  t.is(instanceStates(warned, [doc], ROUTER_OF).get('1-app-router')?.state, 'outdated');
});

test('an unreachable instance: every resource unknown with the reading error', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const states = instanceStates(unreachable('connect ECONNREFUSED 127.0.0.1:8080'), [doc], ROUTER_OF);
  t.deepEqual(Object.fromEntries(states), {
    '1-app-router': { state: 'unknown', errors: ['connect ECONNREFUSED 127.0.0.1:8080'] },
    '1-app-router-redirect': { state: 'unknown', errors: ['connect ECONNREFUSED 127.0.0.1:8080'] },
  });
});

test('routers of other providers (Traefik mode, not emitted) are checked for status only, in the HTTP then TCP/UDP lists', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const docker = reported('whoami', { rule: 'Host(`w.test`)', service: 'whoami' }, 'docker');
  const tcp = {
    ...reported('db', { rule: 'HostSNI(`*`)', service: 'db' }, 'docker'),
    status: 'disabled',
    error: ['x'],
  };
  const routerOf = new Map([
    ['whoami', 'whoami@docker'],
    ['db', 'db@docker'],
    ['gone', 'gone@docker'],
  ]);
  const states = instanceStates(
    reading({ routers: [{ ...docker, rule: 'Host(`changed.test`)' }], tcpRouters: [tcp] }),
    [doc],
    routerOf,
  );
  t.deepEqual(states.get('whoami'), { state: 'live', errors: [] });
  t.deepEqual(states.get('db'), { state: 'disabled', errors: ['x'] });
  t.is(states.get('gone')?.state, 'missing');
  // an @http name is never looked up in the TCP list
  const ours = instanceStates(reading({ tcpRouters: [{ ...tcp, name: '1-app-router@http' }] }), [doc], ROUTER_OF);
  t.is(ours.get('1-app-router')?.state, 'missing');
});

test('runsDocument: exactly our routers, with equal digests; other providers do not count', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const routers = reportedDocument(SERVED);
  const file = reported('dash', { rule: 'Host(`d.test`)', service: 'api@internal' }, 'file');
  const objects = objectsOf(SERVED);
  t.true(runsDocument(reading({ routers: [...routers, file], ...objects }), doc));
  t.false(runsDocument(reading({ routers: [routers[0]] }), doc), 'one of ours absent');
  t.false(
    runsDocument(reading({ routers: [...routers, reported('extra', { rule: 'Host(`x`)', service: 's' })] }), doc),
    'an extra @http router',
  );
  t.false(
    runsDocument(reading({ routers: [routers[0], { ...routers[1], rule: 'Host(`old`)' }] }), doc),
    'a router differs',
  );
  // a disabled router still shows the instance took the document
  t.true(
    runsDocument(
      reading({ routers: [{ ...routers[0], status: 'disabled', error: ['e'] }, routers[1]], ...objects }),
      doc,
    ),
  );
  t.true(runsDocument(reading({}), expectDocument({ http: {} }, 'e', 1)));
});

test('digests: a router Traefik runs as emitted has our digest; one that differs has another', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  const [app, redirect] = reportedDocument(SERVED);
  const expected = doc.routers.get('1-app-router@http')!;
  t.is(expected.name, '1-app-router@http');
  t.is(traefikDigest(app, expected), expected.digest);
  t.is(
    traefikDigest(redirect, doc.routers.get('1-app-router-redirect@http')!),
    doc.routers.get('1-app-router-redirect@http')!.digest,
  );
  t.not(traefikDigest({ ...app, service: 'old' }, expected), expected.digest);
  t.not(expected.digest, doc.routers.get('1-app-router-redirect@http')!.digest);
  // an expected router built by hand (digest only) is compared by digest
  const byHand = { name: expected.name, digest: expected.digest, fields: expected.fields };
  const handDoc = {
    ...doc,
    routers: new Map<string, ExpectedRouter>([
      [expected.name, byHand],
      ['1-app-router-redirect@http', doc.routers.get('1-app-router-redirect@http')!],
    ]),
  };
  t.true(runsDocument(reading({ routers: [app, redirect], ...objectsOf(SERVED) }), handDoc));
  t.false(runsDocument(reading({ routers: [{ ...app, rule: 'Host(`x`)' }, redirect] }), handDoc));
});

test('resourceRouterName: Pangolin mode by router key, Traefik mode by id when emitted, else the router itself', (t) => {
  const doc = expectDocument(SERVED, 'e', 1);
  t.is(resourceRouterName({ id: 'x', router: '1-app-router@http' }, true, 'pangolin', doc), '1-app-router@http');
  t.is(resourceRouterName({ id: 'x', router: '1-app-router' }, false, 'pangolin', doc), '1-app-router@http');
  t.is(resourceRouterName({ id: 'x', router: 'nope@http' }, true, 'pangolin', doc), null);
  const traefik = expectDocument({ http: { routers: { whoami: { rule: 'Host(`w`)', service: 's' } } } }, 'e', 1);
  t.is(resourceRouterName({ id: 'whoami', router: 'whoami@docker' }, true, 'traefik', traefik), 'whoami@http');
  t.is(resourceRouterName({ id: 'whoami', router: 'whoami@docker' }, false, 'traefik', traefik), 'whoami@docker');
  t.is(resourceRouterName({ id: 'other', router: 'other@docker' }, true, 'traefik', traefik), null);
});

test('newKeys: the new key paths, sorted, a new object named once, at most `limit`', (t) => {
  const older = {
    http: { services: { s: { loadBalancer: { servers: [{ url: 'http://a' }] } } } },
    tcp: { services: { x: { loadBalancer: { servers: [{ address: 'a:1' }] } } } },
  };
  const newer = {
    http: {
      services: {
        s: {
          loadBalancer: {
            servers: [
              { url: 'http://a', preservePath: true },
              { url: 'http://b', weight: 2 },
            ],
          },
        },
        t: { loadBalancer: { servers: [] } },
      },
    },
    tcp: { services: { x: { loadBalancer: { servers: [{ address: 'a:1' }], sticky: { cookie: {} } } } } },
    udp: {},
  };
  t.deepEqual(newKeys(older, newer), [
    'http.services.s.loadBalancer.servers.0.preservePath',
    'http.services.s.loadBalancer.servers.1.weight',
    'http.services.t',
    'tcp.services.x.loadBalancer.sticky',
    'udp',
  ]);
  t.deepEqual(newKeys(newer, older), []);
  t.deepEqual(newKeys(older, newer, 2), [
    'http.services.s.loadBalancer.servers.0.preservePath',
    'http.services.s.loadBalancer.servers.1.weight',
  ]);
  // 64 levels deep
  let deepOld: JsonObject = {};
  let deepNew: JsonObject = { leaf: 1 };
  for (let i = 0; i < 64; i++) {
    deepOld = { k: deepOld };
    deepNew = { k: deepNew };
  }
  t.deepEqual(newKeys(deepOld, deepNew), [`${'k.'.repeat(64)}leaf`]);
});

test('worstState: disabled > missing > outdated > warning > live > unknown; empty is unknown', (t) => {
  t.is(worstState([]), 'unknown');
  t.is(worstState(['unknown', 'live']), 'live');
  t.is(worstState(['live', 'warning', 'unknown']), 'warning');
  t.is(worstState(['warning', 'outdated']), 'outdated');
  t.is(worstState(['outdated', 'missing', 'live']), 'missing');
  t.is(worstState(new Set(['missing', 'disabled'] as const)), 'disabled');
});
