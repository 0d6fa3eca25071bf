import test from 'ava';
import { assertClientError, buildApp, call, fakeReferences, snapshot } from '../middlewares/support.ts';

type App = Awaited<ReturnType<typeof buildApp>>;
const post = (app: App, payload: object) => call(app, { method: 'POST', url: '/api/services', payload });
const lb = (id: string, protocol = 'http') => ({
  id,
  name: `LB ${id}`,
  type: 'loadBalancer',
  protocol,
  config: protocol === 'http' ? { servers: [{ url: `http://${id}` }] } : { servers: [{ address: `${id}:1` }] },
});

/** An HTTP load balancer with a health check: Traefik can follow its health. */
const checked = (id: string) => {
  const service = lb(id);
  return { ...service, config: { ...service.config, healthCheck: { path: '/health' } } };
};

test('tcp and udp services allow only loadBalancer and weighted, validated against their own definitions', async (t) => {
  const app = await buildApp(t);
  const mirroring = await post(app, { name: 'M', type: 'mirroring', protocol: 'tcp', config: { service: 'x' } });
  assertClientError(t, mirroring, 422, 'validation_failed');
  t.deepEqual(mirroring.body.details, [{ path: '/type', message: 'a tcp service must be loadBalancer or weighted' }]);
  assertClientError(
    t,
    await post(app, { name: 'F', type: 'failover', protocol: 'udp', config: {} }),
    422,
    'validation_failed',
  );
  const urlServers = await post(app, {
    name: 'T',
    type: 'loadBalancer',
    protocol: 'tcp',
    config: { servers: [{ url: 'http://x' }] },
  });
  assertClientError(t, urlServers, 422, 'validation_failed');
  t.is(urlServers.body.details[0].path, '/config/servers/0/address');
  t.is((await post(app, lb('dns', 'udp'))).status, 201);
  t.is((await post(app, lb('db', 'tcp'))).status, 201);
  const tcpWeighted = await post(app, {
    name: 'TW',
    type: 'weighted',
    protocol: 'tcp',
    config: { services: [{ name: 'db', weight: 1 }] },
  });
  t.is(tcpWeighted.status, 201);
  t.is(tcpWeighted.body.protocol, 'tcp');
});

test('references must name manual/template services of the same protocol; name@provider is not checked', async (t) => {
  const app = await buildApp(t);
  // health-checked: the failover below follows their health through the weighted service
  await post(app, checked('web'));
  await post(app, checked('canary'));
  await post(app, lb('db', 'tcp'));
  const before = await snapshot(app.store.dataDir);
  const weighted = await post(app, {
    name: 'W',
    type: 'weighted',
    config: {
      services: [
        { name: 'web', weight: 1 },
        { name: 'ghost', weight: 1 },
        { name: 'db', weight: 1 },
        { name: 'ext@docker', weight: 1 },
      ],
    },
  });
  assertClientError(t, weighted, 422, 'validation_failed');
  t.deepEqual(
    weighted.body.details.map((d: { path: string }) => d.path),
    ['/config/services/1/name', '/config/services/2/name'],
  );
  t.regex(weighted.body.details[1].message, /db is a tcp service/);
  const mirroring = await post(app, {
    name: 'M',
    type: 'mirroring',
    config: { service: 'nope', mirrors: [{ name: 'none', percent: 10 }] },
  });
  t.deepEqual(
    mirroring.body.details.map((d: { path: string }) => d.path),
    ['/config/service', '/config/mirrors/0/name'],
  );
  const failover = await post(app, { name: 'F', type: 'failover', config: { service: 'web', fallback: 'lost' } });
  t.deepEqual(
    failover.body.details.map((d: { path: string }) => d.path),
    ['/config/fallback'],
  );
  const self = await post(app, { id: 'me', name: 'Me', type: 'failover', config: { service: 'me', fallback: 'web' } });
  t.deepEqual(
    self.body.details.map((d: { path: string }) => d.path),
    ['/config/service'],
  );
  t.deepEqual(await snapshot(app.store.dataDir), before);

  t.is(
    (
      await post(app, {
        id: 'split',
        name: 'Split',
        type: 'weighted',
        config: {
          services: [
            { name: 'web', weight: 9 },
            { name: 'canary', weight: 1 },
            { name: 'ext@docker', weight: 1 },
          ],
          healthCheck: {},
        },
      })
    ).status,
    201,
  );
  t.is(
    (await post(app, { id: 'safe', name: 'Safe', type: 'failover', config: { service: 'split', fallback: 'canary' } }))
      .status,
    201,
  );
  t.is(
    (
      await post(app, {
        id: 'copy',
        name: 'Copy',
        type: 'mirroring',
        config: { service: 'safe', mirrors: [{ name: 'canary', percent: 5 }] },
      })
    ).status,
    201,
  );
  t.deepEqual((await call(app, { method: 'GET', url: '/api/services/canary' })).body.used_by, [
    '/api/services/copy',
    '/api/services/safe',
    '/api/services/split',
  ]);

  // web → copy → safe → split → web would be a cycle
  const cycle = await call(app, {
    method: 'PUT',
    url: '/api/services/split',
    payload: { name: 'Split', type: 'weighted', config: { services: [{ name: 'copy', weight: 1 }] } },
  });
  assertClientError(t, cycle, 422, 'validation_failed');
  t.deepEqual(cycle.body.details, [
    { path: '/config/services/0/name', message: 'creates a cycle: split → copy → safe → split' },
  ]);
});

test('DELETE answers 409 in_use while another service or a reference source uses the service', async (t) => {
  const app = await buildApp(t);
  await post(app, lb('web'));
  await post(app, lb('canary'));
  await post(app, { id: 'split', name: 'Split', type: 'weighted', config: { services: [{ name: 'web', weight: 1 }] } });
  const refused = await call(app, { method: 'DELETE', url: '/api/services/web' });
  assertClientError(t, refused, 409, 'in_use');
  t.deepEqual(
    refused.body.details.map((d: { path: string }) => d.path),
    ['/api/services/split'],
  );

  const refs = fakeReferences({ canary: ['/api/resources/app'] });
  app.services.addReferenceSource(refs.source);
  t.deepEqual((await call(app, { method: 'GET', url: '/api/services/canary' })).body.used_by, ['/api/resources/app']);
  const byResource = await call(app, { method: 'DELETE', url: '/api/services/canary' });
  assertClientError(t, byResource, 409, 'in_use');
  t.deepEqual(
    byResource.body.details.map((d: { path: string }) => d.path),
    ['/api/resources/app'],
  );
  t.deepEqual(refs.removed, []);

  // the protocol of a referenced service cannot change
  assertClientError(
    t,
    await call(app, { method: 'PUT', url: '/api/services/canary', payload: { ...lb('canary', 'tcp'), id: undefined } }),
    409,
    'in_use',
  );
  t.is((await app.inject({ method: 'DELETE', url: '/api/services/split' })).statusCode, 204);
  t.is((await app.inject({ method: 'DELETE', url: '/api/services/web' })).statusCode, 204);
});

test('a fraction where Traefik reads an integer (weight, percent) is refused', async (t) => {
  // Traefik 3.7.15 refuses the whole provider document for it: strconv.ParseInt: parsing "1.500000"
  const app = await buildApp(t);
  const backend = await post(app, { name: 'b', type: 'loadBalancer', config: { servers: [{ url: 'http://b:1' }] } });
  t.is(backend.status, 201);
  const weighted = await post(app, { name: 'w', type: 'weighted', config: { services: [{ name: 'b', weight: 1.5 }] } });
  assertClientError(t, weighted, 422, 'validation_failed');
  t.is(weighted.body.details[0].path, '/config/services/0/weight');
  const mirroring = await post(app, {
    name: 'm',
    type: 'mirroring',
    config: { service: 'b', mirrors: [{ name: 'b', percent: 12.5 }] },
  });
  assertClientError(t, mirroring, 422, 'validation_failed');
  t.is(mirroring.body.details[0].path, '/config/mirrors/0/percent');
  const whole = await post(app, { name: 'w2', type: 'weighted', config: { services: [{ name: 'b', weight: 3 }] } });
  t.is(whole.status, 201);
});

test('unknown Traefik fields become warnings when allowed', async (t) => {
  const app = await buildApp(t, { config: { validation: { allow_unknown_traefik_fields: true } } });
  const created = await post(app, {
    name: 'P2C',
    type: 'loadBalancer',
    config: { servers: [{ url: 'http://a' }], strategy: 'p2c' },
  });
  t.is(created.status, 201);
  t.regex(created.body.warnings[0], /^config\/strategy is not a known field/);
});

test('servicesView gives third-party plugins read-only copies', async (t) => {
  const app = await buildApp(t);
  const created = await post(app, lb('web'));
  t.deepEqual(app.servicesView.list(), [created.body]);
  const copy = app.servicesView.get('web')!;
  copy.name = 'changed';
  t.is(app.servicesView.get('web')!.name, 'LB web');
});

test('references whose health Traefik must follow need a healthCheck (failover main and fallback, weighted members)', async (t) => {
  const app = await buildApp(t);
  await post(app, lb('plain'));
  await post(app, checked('watched'));
  const before = await snapshot(app.store.dataDir);
  // Traefik 3.7: "cannot register plain as updater for fo@http: healthCheck not enabled in config for this WRR service"
  const failover = await post(app, { name: 'F', type: 'failover', config: { service: 'plain', fallback: 'watched' } });
  assertClientError(t, failover, 422, 'validation_failed');
  t.deepEqual(
    failover.body.details.map((d: { path: string }) => d.path),
    ['/config/service'],
  );
  t.regex(failover.body.details[0].message, /service plain has no healthCheck/);
  const fallback = await post(app, {
    name: 'F2',
    type: 'failover',
    config: { service: 'watched', fallback: 'plain', healthCheck: {} },
  });
  t.deepEqual(
    fallback.body.details.map((d: { path: string }) => d.path),
    ['/config/fallback'],
  );
  const weighted = await post(app, {
    name: 'W',
    type: 'weighted',
    config: {
      services: [
        { name: 'watched', weight: 1 },
        { name: 'plain', weight: 1 },
        { name: 'ext@docker', weight: 1 },
      ],
      healthCheck: {},
    },
  });
  t.deepEqual(
    weighted.body.details.map((d: { path: string }) => d.path),
    ['/config/services/1/name'],
  );
  t.deepEqual(await snapshot(app.store.dataDir), before, 'nothing refused was written');
  // a mirroring service follows its main service's health
  t.is(
    (await post(app, { id: 'mirror', name: 'M', type: 'mirroring', config: { service: 'plain', healthCheck: {} } }))
      .status,
    201,
  );
  const overMirror = await post(app, {
    name: 'F3',
    type: 'failover',
    config: { service: 'mirror', fallback: 'plain' },
  });
  t.deepEqual(
    overMirror.body.details.map((d: { path: string }) => d.path),
    ['/config/service'],
  );

  // without healthCheck a weighted service does not follow its members, and a failover's plain fallback is fine
  const loose = { services: [{ name: 'plain', weight: 1 }] };
  t.is((await post(app, { id: 'loose', name: 'Loose', type: 'weighted', config: loose })).status, 201);
  const ok = await post(app, {
    id: 'ok',
    name: 'OK',
    type: 'failover',
    config: { service: 'watched', fallback: 'loose' },
  });
  t.is(ok.status, 201);

  // the main service cannot lose its healthCheck while the failover follows it
  const dropped = await call(app, {
    method: 'PUT',
    url: '/api/services/watched',
    payload: { name: 'LB watched', type: 'loadBalancer', config: { servers: [{ url: 'http://watched' }] } },
  });
  assertClientError(t, dropped, 422, 'validation_failed');
  t.deepEqual(dropped.body.details, [
    {
      path: '/config/healthCheck',
      message:
        "the failover service ok follows this service's health: Traefik disables it and its routers when this service has no healthCheck",
    },
  ]);
});

test('empty objects Traefik cannot decode are refused; those it accepts empty pass', async (t) => {
  const app = await buildApp(t);
  await post(app, lb('web'));
  const servers = [{ url: 'http://web' }];
  // Traefik 3.7.15 refuses the whole document for each of these: "<key> cannot be a standalone element"
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['loadBalancer', { servers, healthCheck: {} }, '/config/healthCheck'],
    ['loadBalancer', { servers, responseForwarding: {} }, '/config/responseForwarding'],
    ['loadBalancer', { servers, healthCheck: { path: '/h', headers: {} } }, '/config/healthCheck/headers'],
    ['weighted', { services: [{ name: 'web', weight: 1 }], sticky: {} }, '/config/sticky'],
    ['failover', {}, '/config'],
  ];
  for (const [type, config, path] of refused) {
    const reply = await post(app, { name: `Empty ${path} ${type}`, type, config });
    assertClientError(t, reply, 422, 'validation_failed');
    t.true(
      reply.body.details.some(
        (d: { path: string; message: string }) => d.path === path && /standalone element/.test(d.message),
      ),
      `${type} ${path}: ${JSON.stringify(reply.body.details)}`,
    );
  }
  const accepted: Array<[string, string, Record<string, unknown>]> = [
    ['http', 'loadBalancer', { servers, sticky: {} }],
    ['http', 'loadBalancer', { servers, sticky: { cookie: {} } }],
    ['http', 'weighted', { services: [{ name: 'web', weight: 1 }], sticky: { cookie: {} } }],
    ['http', 'mirroring', { service: 'web', healthCheck: {} }],
    ['tcp', 'loadBalancer', { servers: [{ address: 'db:5432' }], proxyProtocol: {} }],
  ];
  for (const [i, [protocol, type, config]] of accepted.entries()) {
    const reply = await post(app, { name: `Accepted ${i}`, type, protocol, config });
    t.is(reply.status, 201, `${protocol} ${type} ${JSON.stringify(config)}: ${JSON.stringify(reply.body)}`);
  }
});

test('an unknown key inside a server, sticky cookie or health check is 422 at its path; every key Traefik 3.5.3 and 3.7.15 decode passes', async (t) => {
  const app = await buildApp(t);
  await post(app, checked('web'));
  await post(app, lb('put-me'));
  await post(app, lb('db', 'tcp'));
  const before = await snapshot(app.store.dataDir);
  const servers = [{ url: 'http://web' }];
  const members = [{ name: 'web', weight: 1 }];
  // each one made Traefik 3.5.3 and 3.7.15 refuse the whole provider document ("field not found,
  // node: zz") and keep the previous one: the SchemaStore schema leaves these objects open
  const refused: Array<[string, string, Record<string, unknown>, string]> = [
    ['http', 'loadBalancer', { servers: [{ url: 'http://web', zz: 1 }] }, '/config/servers/0/zz'],
    ['http', 'loadBalancer', { servers, sticky: { cookie: {}, zz: 1 } }, '/config/sticky/zz'],
    ['http', 'loadBalancer', { servers, sticky: { cookie: { name: 'a', zz: 1 } } }, '/config/sticky/cookie/zz'],
    [
      'http',
      'loadBalancer',
      { servers, sticky: { cookie: { partitioned: true } } },
      '/config/sticky/cookie/partitioned',
    ],
    ['http', 'loadBalancer', { servers, healthCheck: { path: '/', zz: 1 } }, '/config/healthCheck/zz'],
    ['http', 'loadBalancer', { servers, passiveHealthCheck: { zz: 1 } }, '/config/passiveHealthCheck/zz'],
    [
      'http',
      'loadBalancer',
      { servers, responseForwarding: { flushInterval: '1s', zz: 1 } },
      '/config/responseForwarding/zz',
    ],
    ['http', 'weighted', { services: [{ name: 'web', weight: 1, zz: 1 }] }, '/config/services/0/zz'],
    ['http', 'weighted', { services: members, sticky: { cookie: { zz: 1 } } }, '/config/sticky/cookie/zz'],
    ['http', 'weighted', { services: members, healthCheck: { zz: 1 } }, '/config/healthCheck/zz'],
    ['http', 'mirroring', { service: 'web', mirrors: [{ name: 'web', percent: 10, zz: 1 }] }, '/config/mirrors/0/zz'],
    ['http', 'mirroring', { service: 'web', healthCheck: { zz: 1 } }, '/config/healthCheck/zz'],
    ['http', 'failover', { service: 'web', fallback: 'web', healthCheck: { '': 1 } }, '/config/healthCheck/'],
    ['tcp', 'loadBalancer', { servers: [{ address: 'db:1', weight: 1 }] }, '/config/servers/0/weight'],
    [
      'tcp',
      'loadBalancer',
      { servers: [{ address: 'db:1' }], proxyProtocol: { version: 2, zz: 1 } },
      '/config/proxyProtocol/zz',
    ],
    ['udp', 'loadBalancer', { servers: [{ address: 'dns:53', zz: 1 }] }, '/config/servers/0/zz'],
    ['tcp', 'loadBalancer', { servers: [{ address: 'db:1' }], healthCheck: { zz: 1 } }, '/config/healthCheck/zz'],
    ['tcp', 'weighted', { services: [{ name: 'db', weight: 1 }], healthCheck: { zz: 1 } }, '/config/healthCheck/zz'],
    ['http', 'failover', { service: 'web', fallback: 'web', errors: { zz: 1 } }, '/config/errors/zz'],
  ];
  for (const [method, url] of [
    ['POST', '/api/services'],
    ['PUT', '/api/services/put-me'],
  ] as const) {
    for (const [protocol, type, config, path] of refused) {
      const reply = await call(app, { method, url, payload: { name: 'Probe', type, protocol, config } });
      assertClientError(t, reply, 422, 'validation_failed');
      t.deepEqual(
        reply.body.details,
        [{ path, message: `is not a known field of a ${protocol} ${type} service` }],
        `${method} ${protocol} ${type} ${path}`,
      );
    }
  }
  t.deepEqual(await snapshot(app.store.dataDir), before, 'nothing stored');

  // every key of these objects that Traefik 3.5.3 and 3.7.15 both decode (probed with their file
  // provider); newer ones (sticky cookie expires, passiveHealthCheck) pass as gated keys
  const cookie = { name: 'c', secure: true, httpOnly: true, sameSite: 'lax', maxAge: 60, path: '/', domain: 'a.test' };
  const accepted: Array<[string, string, Record<string, unknown>]> = [
    [
      'http',
      'loadBalancer',
      {
        servers: [{ url: 'http://web', weight: 2, preservePath: true, fenced: false, scheme: 'http', port: '80' }],
        sticky: { cookie: { ...cookie, expires: 60 } },
        healthCheck: {
          scheme: 'http',
          mode: 'http',
          path: '/h',
          method: 'GET',
          status: 200,
          port: 80,
          interval: '10s',
          unhealthyInterval: '5s',
          timeout: '3s',
          hostname: 'web',
          followRedirects: true,
          headers: { a: 'b' },
        },
        passiveHealthCheck: { failureWindow: '10s', maxFailedAttempts: 3 },
        responseForwarding: { flushInterval: '100ms' },
      },
    ],
    ['http', 'weighted', { services: [{ name: 'web', weight: 1, status: 'x' }], sticky: { cookie }, healthCheck: {} }],
    ['http', 'mirroring', { service: 'web', mirrors: [{ name: 'web', percent: 10 }], healthCheck: {} }],
    [
      'http',
      'failover',
      { service: 'web', fallback: 'web', healthCheck: {}, errors: { status: ['500-599'], maxRequestBodyBytes: 1024 } },
    ],
    [
      'tcp',
      'loadBalancer',
      {
        servers: [{ address: 'db:1', tls: true }],
        proxyProtocol: { version: 2 },
        healthCheck: { port: 1, send: 'a', expect: 'b', interval: '10s', unhealthyInterval: '5s', timeout: '1s' },
      },
    ],
    ['udp', 'loadBalancer', { servers: [{ address: 'dns:53' }] }],
  ];
  for (const [i, [protocol, type, config]] of accepted.entries()) {
    const reply = await post(app, { name: `All keys ${i}`, type, protocol, config });
    t.is(reply.status, 201, `${protocol} ${type}: ${JSON.stringify(reply.body)}`);
  }
});
