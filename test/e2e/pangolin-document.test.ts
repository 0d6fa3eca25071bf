/**
 * Pangolin's own document (fixtures/pangolin/traefik-config.json: HTTP, TCP and UDP routers, badger,
 * sticky cookies, a serversTransport), its servers moved to a loopback backend, served through Stack
 * Manager to the real Traefik 3.7 and to the older 3.5 that the version gate (G14) supports.
 *
 * The version gate (API.md §4.9 G14, issue 26): the fixture's TCP and UDP services carry the `sticky`
 * key Pangolin adds for sticky sessions, which no Traefik decodes. Served through Stack Manager both
 * versions route (the key is dropped); the same document served ungated, as a control, is refused
 * whole by each (its log says so). Then, with the version read from the instance's API, a 3.7-only
 * key from upstream (service-level `middlewares`) and one of ours (`retry.timeout`) are served to 3.7
 * and dropped for 3.5, which keeps routing.
 */
import { readFile } from 'node:fs/promises';
import test, { type ExecutionContext } from 'ava';
import { fixture } from '../helpers/shared.ts';
import { waitFor } from '../helpers/wait.ts';
import { startStackManager, PROVIDER_TOKEN, type StackManager } from '../helpers/traefik-stack.ts';
import {
  startBackend,
  startFakePangolin,
  startTraefik,
  traefikTest,
  TRAEFIK_BIN,
  TRAEFIK_BIN_OLD,
  TRAEFIK_VERSION,
  TRAEFIK_VERSION_OLD,
} from '../helpers/traefik.ts';

/** Every server of the fixture pointed at the backend (URLs) or its address (TCP/UDP). */
function onLoopback(document: any, url: string): any {
  const address = new URL(url).host;
  for (const protocol of ['http', 'tcp', 'udp']) {
    for (const service of Object.values<any>(document[protocol]?.services ?? {})) {
      for (const server of service.loadBalancer?.servers ?? []) {
        if ('url' in server) server.url = url;
        if ('address' in server) server.address = address;
      }
    }
  }
  return document;
}

const ENTRY_POINTS = { 'tcp-2222': 'tcp', 'tcp-5432': 'tcp', 'udp-19132': 'udp' } as const;

/** The `sticky` key Pangolin adds to a TCP/UDP resource's load balancer; no Traefik version decodes it. */
const STICKY = { cookie: { name: 'p_sticky' } };
const STICKY_SERVICES = [
  ['tcp', '4-SSH-service'],
  ['tcp', '5-Postgres-service'],
  ['udp', '7-Bedrock-service'],
] as const;
const DROPPED_STICKY = STICKY_SERVICES.map(([protocol, name]) => ({
  path: `/${protocol}/services/${name}/loadBalancer`,
  key: 'sticky',
  min_version: null,
}));
const REFUSED = /cannot (decode|unmarshal)|field not found|error while building configuration/i;

/** Dropped keys in a stable order. */
const byPath = (keys: Array<{ path: string; key: string }>) =>
  [...keys].sort((a, b) => `${a.path} ${a.key}`.localeCompare(`${b.path} ${b.key}`));

/** The ids of the diagnosis' keys_dropped findings (§4.19), sorted. */
async function droppedFindings(sm: StackManager): Promise<string[]> {
  const reply = await sm.call('GET', '/api/proxy-config/diagnosis');
  return reply.json.findings
    .filter((f: { kind: string }) => f.kind === 'keys_dropped')
    .map((f: { id: string }) => f.id)
    .sort();
}

async function pangolinThroughTraefik(t: ExecutionContext, binary: string | null, version: string) {
  const backend = await startBackend(t, 'nextcloud');
  const document = onLoopback(
    JSON.parse(await readFile(fixture('pangolin', 'traefik-config.json'), 'utf8')),
    backend.url,
  );
  for (const [protocol, name] of STICKY_SERVICES) document[protocol].services[name].loadBalancer.sticky = STICKY;
  const pangolin = await startFakePangolin(t, document);
  const sm = await startStackManager(t, { pangolinUrl: pangolin.url });
  const traefik = await startTraefik(t, {
    providerUrl: sm.providerUrl,
    token: PROVIDER_TOKEN,
    binary,
    entryPoints: ENTRY_POINTS,
  });
  t.is((await traefik.api('/api/version')).Version, version);

  const http = await traefik.waitForRouters(Object.keys(document.http.routers));
  const byName = new Map(http.map((router: any) => [router.name, router]));
  // Pangolin's path rule uses a look-ahead, which Go's regexp has not: Traefik disables that one
  // router (the upstream's rule, passed on as it is) and keeps every other
  const wiki = byName.get('3-5e2f283f21admin29-regex-Wiki-router@http');
  t.is(wiki.status, 'disabled');
  t.regex(wiki.error.join(' '), /invalid or unsupported Perl syntax/);
  for (const router of http.filter((r: any) => r !== wiki)) t.is(router.status, 'enabled', router.name);
  for (const router of await traefik.waitForRouters(Object.keys(document.tcp.routers), 'tcp'))
    t.is(router.status, 'enabled', router.name);
  for (const router of await traefik.waitForRouters(Object.keys(document.udp.routers), 'udp'))
    t.is(router.status, 'enabled', router.name);

  const reply = await traefik.waitForReply(
    { entryPoint: 'websecure', host: 'cloud.example.com', path: '/index.php' },
    (r) => r.status === 200,
  );
  t.is(reply.json.backend, 'nextcloud');
  t.is(reply.json.headers['x-badger-stub'], 'badger@http');
  const redirect = await traefik.request({ entryPoint: 'web', host: 'cloud.example.com', path: '/a' });
  t.is(redirect.headers.location, 'https://cloud.example.com/a');
  // nothing of the document was refused: Traefik logged no provider error about it
  t.notRegex(traefik.log(), REFUSED);

  // the version gate: with the version unknown only the keys no Traefik has are dropped; TCP routes
  const status = await sm.call('GET', '/api/proxy-config/status');
  t.is(status.json.traefik_version.version, null);
  t.deepEqual(byPath(status.json.dropped_keys), DROPPED_STICKY);
  t.deepEqual(await droppedFindings(sm), ['keys_dropped:version-gate:sticky:none']);
  const tcp = await traefik.waitForReply(
    { entryPoint: 'tcp-2222', host: 'ssh.test', path: '/ssh' },
    (r) => r.status === 200,
  );
  t.is(tcp.json.backend, 'nextcloud');

  // control: the same document served ungated (the sticky keys put back) is refused whole by this version
  const served = await fetch(sm.providerUrl, { headers: { authorization: `Bearer ${PROVIDER_TOKEN}` } });
  t.is(served.status, 200);
  const ungated = (await served.json()) as Record<string, any>;
  for (const [protocol, name] of STICKY_SERVICES) {
    t.is(ungated[protocol].services[name].loadBalancer.sticky, undefined, `${protocol} ${name} gated`);
    ungated[protocol].services[name].loadBalancer.sticky = STICKY;
  }
  const raw = await startFakePangolin(t, ungated);
  const control = await startTraefik(t, {
    providerUrl: `${raw.url}/traefik-config`,
    binary,
    entryPoints: ENTRY_POINTS,
  });
  await waitFor(() => raw.requests > 1 || null, 3_000);
  const refusal = await waitFor(() => /.*field not found, node: sticky.*/.exec(control.log())?.[0] ?? null, 5_000);
  t.log(`Traefik ${version}, the same document ungated: ${refusal}`);
  t.regex(refusal, /cannot decode configuration data/);
  const taken = (await control.apiList('/api/http/routers')).filter((router: any) => router.provider === 'http');
  t.deepEqual(taken, [], 'Traefik runs nothing of the ungated document');
  t.is((await control.request({ entryPoint: 'websecure', host: 'cloud.example.com', path: '/' })).status, 404);
  await control.stop();

  // the version read from the instance's API
  const source = await sm.call('PUT', '/api/datasource/traefik', { type: 'traefik', url: traefik.apiBase });
  t.true([200, 201].includes(source.status), source.text);
  t.is((await sm.call('POST', '/api/proxy-config/invalidate')).status, 200);
  const known = await sm.call('GET', '/api/proxy-config/status');
  t.like(known.json.traefik_version, { version, source: 'traefik' });

  // 3.7-only keys: upstream, a service-level middleware on Nextcloud's service; ours, retry.timeout
  const edited = structuredClone(document);
  edited.http.middlewares['svc-level-header'] = { headers: { customResponseHeaders: { 'X-Service-Level': 'on' } } };
  edited.http.services['1-Nextcloud-service'].middlewares = ['svc-level-header'];
  pangolin.document = edited;
  const newer = version.startsWith('3.7');
  const serviceKey = { path: '/http/services/1-Nextcloud-service', key: 'middlewares', min_version: '3.7.0' };
  // the edit reached the served document (kept for 3.7) or the dropped keys (3.5)
  await waitFor(async () => {
    if (!newer) {
      const now = await sm.call('GET', '/api/proxy-config/status');
      return now.json.dropped_keys.some((k: { path: string; key: string }) => k.path === serviceKey.path) || null;
    }
    const doc = await fetch(sm.providerUrl, { headers: { authorization: `Bearer ${PROVIDER_TOKEN}` } });
    return ((await doc.json()) as any).http.services['1-Nextcloud-service'].middlewares?.length === 1 || null;
  }, 3_000);
  const retry = await sm.call('POST', '/api/middlewares', {
    id: 'retry-timeout',
    name: 'Retry with timeout',
    type: 'retry',
    config: { attempts: 2, timeout: '5s' },
  });
  t.is(retry.status, 201, retry.text);
  if (newer) t.deepEqual(retry.json.warnings, []);
  else
    t.true(
      retry.json.warnings.some((w: string) =>
        w.startsWith(`config/timeout is decoded by Traefik 3.7.0 and later: Traefik ${version} cannot`),
      ),
      JSON.stringify(retry.json.warnings),
    );
  const assigned = await sm.call('POST', '/api/resources/1-nextcloud-router/middlewares', {
    middleware_id: 'retry-timeout',
  });
  t.is(assigned.status, 200, assigned.text);
  // Traefik took the document holding both: the router runs the retry middleware
  await waitFor(async () => {
    const router = await traefik.api('/api/http/routers/1-Nextcloud-router@http');
    return (router.middlewares ?? []).includes('retry-timeout@http') || null;
  }, 5_000);
  const middleware = await traefik.api('/api/http/middlewares/retry-timeout@http');
  t.is(middleware.status, 'enabled');
  const service = await traefik.api('/api/http/services/1-Nextcloud-service@http');
  t.is(service.status, 'enabled');
  const request = { entryPoint: 'websecure', host: 'cloud.example.com', path: '/index.php' };
  const routed = await traefik.waitForReply(request, (r) => r.status === 200);
  t.is(routed.json.backend, 'nextcloud');
  const after = await sm.call('GET', '/api/proxy-config/status');
  if (newer) {
    t.like(middleware.retry, { attempts: 2, timeout: '5s' });
    t.deepEqual(service.middlewares, ['svc-level-header']);
    t.is(routed.headers['x-service-level'], 'on', 'the service-level middleware runs');
    t.deepEqual(byPath(after.json.dropped_keys), DROPPED_STICKY);
  } else {
    t.like(middleware.retry, { attempts: 2 });
    t.false('timeout' in middleware.retry, JSON.stringify(middleware.retry));
    t.is(service.middlewares, undefined);
    t.is(routed.headers['x-service-level'], undefined);
    t.deepEqual(
      byPath(after.json.dropped_keys),
      byPath([
        ...DROPPED_STICKY,
        serviceKey,
        { path: '/http/middlewares/retry-timeout/retry', key: 'timeout', min_version: '3.7.0' },
      ]),
    );
  }
  t.deepEqual(
    await droppedFindings(sm),
    newer
      ? ['keys_dropped:version-gate:sticky:none']
      : [
          'keys_dropped:version-gate:middlewares:3.7.0',
          'keys_dropped:version-gate:sticky:none',
          'keys_dropped:version-gate:timeout:3.7.0',
        ],
  );
  t.log(
    `Traefik ${version}: dropped ${JSON.stringify(byPath(after.json.dropped_keys).map((k) => `${k.path}/${k.key}`))}`,
  );
  t.notRegex(traefik.log(), REFUSED);
  for (const router of await traefik.waitForRouters(Object.keys(document.tcp.routers), 'tcp'))
    t.is(router.status, 'enabled', router.name);
}

traefikTest(test)(
  `Traefik ${TRAEFIK_VERSION} runs Pangolin's document (TCP/UDP sticky, 3.7-only keys) as Stack Manager gates it for its version, and refuses it ungated`,
  (t) => pangolinThroughTraefik(t, TRAEFIK_BIN, TRAEFIK_VERSION),
);
traefikTest(test, TRAEFIK_BIN_OLD)(
  `Traefik ${TRAEFIK_VERSION_OLD} runs Pangolin's document (TCP/UDP sticky, 3.7-only keys) as Stack Manager gates it for its version, and refuses it ungated`,
  (t) => pangolinThroughTraefik(t, TRAEFIK_BIN_OLD, TRAEFIK_VERSION_OLD),
);
