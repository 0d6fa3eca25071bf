/**
 * Pangolin's own document (fixtures/pangolin/traefik-config.json: HTTP, TCP and UDP routers, badger,
 * sticky cookies, a serversTransport), its servers moved to a loopback backend, served through Stack
 * Manager to the real Traefik 3.7 and to the older 3.5 that the version gate (G14) supports.
 */
import { readFile } from 'node:fs/promises';
import test, { type ExecutionContext } from 'ava';
import { fixture } from '../helpers/shared.ts';
import { startStackManager, PROVIDER_TOKEN } from '../helpers/traefik-stack.ts';
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

async function pangolinThroughTraefik(t: ExecutionContext, binary: string | null, version: string) {
  const backend = await startBackend(t, 'nextcloud');
  const document = onLoopback(
    JSON.parse(await readFile(fixture('pangolin', 'traefik-config.json'), 'utf8')),
    backend.url,
  );
  const pangolin = await startFakePangolin(t, document);
  const sm = await startStackManager(t, { pangolinUrl: pangolin.url });
  const traefik = await startTraefik(t, {
    providerUrl: sm.providerUrl,
    token: PROVIDER_TOKEN,
    binary,
    entryPoints: { 'tcp-2222': 'tcp', 'tcp-5432': 'tcp', 'udp-19132': 'udp' },
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
  t.notRegex(traefik.log(), /cannot (decode|unmarshal)|field not found|error while building configuration/i);
}

traefikTest(test)(`Traefik ${TRAEFIK_VERSION} runs Pangolin's document as Stack Manager serves it`, (t) =>
  pangolinThroughTraefik(t, TRAEFIK_BIN, TRAEFIK_VERSION),
);
traefikTest(test, TRAEFIK_BIN_OLD)(
  `Traefik ${TRAEFIK_VERSION_OLD} runs Pangolin's document as Stack Manager serves it`,
  (t) => pangolinThroughTraefik(t, TRAEFIK_BIN_OLD, TRAEFIK_VERSION_OLD),
);
