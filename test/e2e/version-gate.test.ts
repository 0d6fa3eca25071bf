/**
 * The version gate (API.md §4.9 G14) against the real Traefik 3.5.3 and 3.7.15. Traefik's HTTP
 * provider refuses the whole document for one key it cannot decode and keeps its previous one; the
 * gate leaves such keys out of the document served to that version. Each test: a Pangolin document
 * with a TCP router whose load balancer has `sticky` (Pangolin emits it; no Traefik decodes it) and
 * a service of ours with `passiveHealthCheck` (Traefik 3.6.0 and later).
 */
import test, { type ExecutionContext } from 'ava';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { traefikTest, TRAEFIK_BIN, TRAEFIK_BIN_OLD, TRAEFIK_VERSION, TRAEFIK_VERSION_OLD } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const REFUSED = /cannot decode configuration data: field not found, node: passiveHealthCheck/g;
const TCP_ROUTER = '9-db-router';

/** Adds Pangolin's TCP resource shape, with its `sticky` key, routed to backend `a` on `tcp-2222`. */
function withTcpSticky(document: Record<string, any>): void {
  const url = Object.values<any>(document.http.services)[0].loadBalancer.servers[0].url as string;
  document.tcp = {
    routers: { [TCP_ROUTER]: { entryPoints: ['tcp-2222'], rule: 'HostSNI(`*`)', service: '9-db-service' } },
    services: {
      '9-db-service': {
        loadBalancer: { servers: [{ address: new URL(url).host }], sticky: { cookie: { name: 'p_sticky' } } },
      },
    },
  };
}

async function stackFor(t: ExecutionContext, binary: string | null, config?: Record<string, unknown>): Promise<Stack> {
  return startStack(t, {
    traefik: { binary, entryPoints: { 'tcp-2222': 'tcp' } },
    editDocument: withTcpSticky,
    config,
  });
}

/** The TCP router runs and forwards: the sticky key never reached Traefik. */
async function tcpRoutes(t: ExecutionContext, stack: Stack): Promise<void> {
  const [router] = await stack.traefik.waitForRouters([TCP_ROUTER], 'tcp');
  t.is(router.status, 'enabled');
  const reply = await stack.traefik.waitForReply(
    { entryPoint: 'tcp-2222', host: 'db.test', path: '/db' },
    (r) => r.status === 200,
  );
  t.is(reply.json.backend, 'a');
}

const passiveService = (stack: Stack) => ({
  name: 'Passive checked',
  type: 'loadBalancer',
  config: {
    servers: [{ url: stack.backends[0].url }],
    passiveHealthCheck: { maxFailedAttempts: 3, failureWindow: '10s' },
  },
});

traefikTest(test, TRAEFIK_BIN_OLD)(
  `Traefik ${TRAEFIK_VERSION_OLD} refuses the whole document for a 3.6 key; gated for its version (read from its API) it takes it, and later changes`,
  async (t) => {
    const stack = await stackFor(t, TRAEFIK_BIN_OLD);
    const { sm, traefik } = stack;
    // version unknown (the Traefik source points nowhere yet): only the key no Traefik has goes
    const before = await sm.call('GET', '/api/proxy-config/status');
    t.is(before.json.traefik_version.version, null);
    t.deepEqual(before.json.dropped_keys, [
      { path: '/tcp/services/9-db-service/loadBalancer', key: 'sticky', min_version: null },
    ]);
    await tcpRoutes(t, stack);

    // our API refuses the key no version has
    const sticky = await sm.call('POST', '/api/services', {
      name: 'Sticky tcp',
      protocol: 'tcp',
      type: 'loadBalancer',
      config: { servers: [{ address: '127.0.0.1:9' }], sticky: { cookie: { name: 'x' } } },
    });
    t.is(sticky.status, 422, sticky.text);
    t.true(
      sticky.json.details.some((d: { path: string }) => d.path === '/config/sticky'),
      sticky.text,
    );

    // control: ungated, a 3.6 key makes Traefik 3.5 refuse the whole document
    const created = await sm.call('POST', '/api/services', passiveService(stack));
    t.is(created.status, 201, created.text);
    const id = created.json.id as string;
    t.true(
      created.json.warnings.some((w: string) => w.includes('Traefik version is unknown')),
      created.text,
    );
    await waitFor(() => REFUSED.test(traefik.log()) || null, 5_000);
    const refusal = traefik
      .log()
      .match(/.*cannot decode configuration data: field not found, node: passiveHealthCheck.*/)![0];
    t.log(`Traefik ${TRAEFIK_VERSION_OLD}: ${refusal}`);
    // a later change is lost: Traefik polls it, refuses it again and keeps routing without it
    const mw = await sm.call('POST', '/api/middlewares', {
      name: 'Gate header',
      type: 'headers',
      config: { customResponseHeaders: { 'X-Gate': 'one' } },
    });
    t.is(mw.status, 201, mw.text);
    const refusals = () => traefik.log().match(REFUSED)?.length ?? 0;
    const seen = refusals();
    const assigned = await sm.call('POST', '/api/resources/1-app-router/middlewares', { middleware_id: mw.json.id });
    t.is(assigned.status, 200, assigned.text);
    await waitFor(() => refusals() > seen || null, 5_000);
    const lost = await traefik.request({ entryPoint: 'websecure', host: 'app.test', path: '/' });
    t.is(lost.status, 200);
    t.is(lost.headers['x-gate'], undefined, 'Traefik still runs its previous document');

    // the gate, with the version read from this Traefik's API
    const source = await sm.call('PUT', '/api/datasource/traefik', { type: 'traefik', url: traefik.apiBase });
    t.true([200, 201].includes(source.status), source.text);
    t.is((await sm.call('POST', '/api/proxy-config/invalidate')).status, 200);
    const status = await sm.call('GET', '/api/proxy-config/status');
    t.like(status.json.traefik_version, { version: TRAEFIK_VERSION_OLD, source: 'traefik' });
    t.deepEqual(
      [...status.json.dropped_keys].sort((a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key)),
      [
        { path: `/http/services/${id}/loadBalancer`, key: 'passiveHealthCheck', min_version: '3.6.0' },
        { path: '/tcp/services/9-db-service/loadBalancer', key: 'sticky', min_version: null },
      ],
    );
    const request = { entryPoint: 'websecure', host: 'app.test', path: '/' };
    await traefik.waitForReply(request, (r) => r.status === 200 && r.headers['x-gate'] === 'one');
    // and the changes after it
    const put = await sm.call('PUT', `/api/middlewares/${mw.json.id}`, {
      name: 'Gate header',
      type: 'headers',
      config: { customResponseHeaders: { 'X-Gate': 'two' } },
    });
    t.is(put.status, 200, put.text);
    await traefik.waitForReply(request, (r) => r.status === 200 && r.headers['x-gate'] === 'two');
    const service = await traefik.api(`/api/http/services/${id}@http`);
    t.is(service.status, 'enabled');
    t.is(service.loadBalancer.passiveHealthCheck, undefined);
    const view = await sm.call('GET', `/api/services/${id}`);
    t.true(
      view.json.warnings.some((w: string) => w.includes(`Traefik ${TRAEFIK_VERSION_OLD} cannot`)),
      JSON.stringify(view.json.warnings),
    );
    await tcpRoutes(t, stack);
  },
);

traefikTest(test, TRAEFIK_BIN)(
  `Traefik ${TRAEFIK_VERSION} (proxy.traefik_version) keeps the 3.6 key; the TCP sticky key is still dropped`,
  async (t) => {
    const stack = await stackFor(t, TRAEFIK_BIN, { proxy: { traefik_version: TRAEFIK_VERSION } });
    const { sm, traefik } = stack;
    const created = await sm.call('POST', '/api/services', passiveService(stack));
    t.is(created.status, 201, created.text);
    const id = created.json.id as string;
    t.deepEqual(created.json.warnings, []);
    const service = await waitFor(() => traefik.api(`/api/http/services/${id}@http`).catch(() => null), 5_000);
    t.is(service.status, 'enabled');
    t.like(service.loadBalancer.passiveHealthCheck, { maxFailedAttempts: 3 });
    const status = await sm.call('GET', '/api/proxy-config/status');
    t.like(status.json.traefik_version, { version: TRAEFIK_VERSION, source: 'setting' });
    t.deepEqual(status.json.dropped_keys, [
      { path: '/tcp/services/9-db-service/loadBalancer', key: 'sticky', min_version: null },
    ]);
    await tcpRoutes(t, stack);
    t.notRegex(traefik.log(), /cannot decode configuration data/);
  },
);
