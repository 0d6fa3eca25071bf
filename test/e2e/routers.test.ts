/**
 * Router overrides of a resource (API.md §4.4, §4.9 G7/G9) through a real Traefik: priority
 * against an overlapping Pangolin router, entry points, TLS with Traefik's default certificate,
 * `tls.options`, header overrides, and TCP routers with `HostSNI` to a TCP echo backend.
 */
import net from 'node:net';
import tls from 'node:tls';
import test from 'ava';
import { hookTeardowns } from '../helpers/hook-context.ts';
import { startStack, type Stack } from '../helpers/traefik-stack.ts';
import { send, traefikTest, TRAEFIK_BIN, type Backend } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);
const hook = hookTeardowns(test);
let stack: Stack;
let echo: net.Server;
let echoPort: number;

const RESOURCES = [
  { id: 1, name: 'narrow', host: 'pri.test', path: '/api', backends: ['narrow'] },
  { id: 2, name: 'wide', host: 'pri.test', backends: ['wide'] },
  { id: 3, name: 'ep', host: 'ep.test', backends: ['ep'] },
  { id: 4, name: 'plain', host: 'plain.test', backends: ['plain'] },
  { id: 5, name: 'modern', host: 'modern.test', backends: ['modern'] },
  { id: 6, name: 'hdr', host: 'hdr.test', backends: ['hdr'] },
  { id: 7, name: 'tcp', host: 'tcp.test', backends: ['tcp'] },
  { id: 8, name: 'derived', host: 'derived.test', backends: ['derived'] },
  { id: 9, name: 'plaintcp', host: 'plaintcp.test', backends: ['plaintcp'] },
];

test.before(async (t) => {
  if (!TRAEFIK_BIN) return;
  const context = hook.context(t);
  echo = net.createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as net.AddressInfo).port;
  context.teardown(() => new Promise<void>((resolve) => echo.close(() => resolve())));
  stack = await startStack(context, {
    backends: RESOURCES.map((r) => r.backends[0]),
    resources: RESOURCES,
    traefik: { entryPoints: { alt: 'tcp', 'tcp-echo': 'tcp', 'tcp-pangolin': 'tcp', 'tcp-plain': 'tcp' } },
    editDocument(document) {
      const routers = document.http.routers;
      // the wide router outranks the narrow one until our priority override says otherwise
      routers['2-wide-router'].priority = 200;
      // plain.test and plaintcp.test are plain-HTTP resources (Pangolin without SSL): web only, no tls
      for (const name of ['4-plain-router', '9-plaintcp-router']) {
        routers[name].entryPoints = ['web'];
        delete routers[name].tls;
        delete routers[`${name}-redirect`];
      }
      document.tls = { options: { modern: { minVersion: 'VersionTLS13' } } };
      // Pangolin's own raw TCP resource (as in fixtures/pangolin/traefik-config.json)
      document.tcp = {
        routers: {
          '10-echo-router': { entryPoints: ['tcp-pangolin'], rule: 'HostSNI(`*`)', service: '10-echo-service' },
        },
        services: { '10-echo-service': { loadBalancer: { servers: [{ address: `127.0.0.1:${echoPort}` }] } } },
      };
    },
  });
  await stack.traefik.waitForRouters(['10-echo-router'], 'tcp');
});

const backend = (name: string): Backend => stack.backends.find((b) => b.name === name)!;

/** PUT /api/resources/:id/config/:part, failing with the answer when it is not 200. */
async function putConfig(resource: string, part: string, body: unknown): Promise<any> {
  const reply = await stack.sm.call('PUT', `/api/resources/${resource}/config/${part}`, body);
  if (reply.status !== 200) throw new Error(`PUT ${resource} config/${part}: ${reply.status} ${reply.text}`);
  return reply.json;
}

interface Handshake {
  protocol: string | null;
  subject: string;
  socket: tls.TLSSocket;
}

/** A TLS handshake with Traefik on `port` (SNI = servername); rejects when it fails. */
function handshake(port: number, servername: string, options: tls.ConnectionOptions = {}): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ...options });
    socket.once('secureConnect', () =>
      resolve({ protocol: socket.getProtocol(), subject: String(socket.getPeerCertificate().subject?.CN), socket }),
    );
    socket.once('error', reject);
  });
}

/** Writes `payload` on a connected socket and collects what comes back until it closes or `until` holds. */
function exchange(socket: net.Socket, payload: string, until: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = () => {
      socket.destroy();
      resolve(text);
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (until(text)) done();
    });
    socket.once('end', done);
    socket.once('error', reject);
    socket.setTimeout(30_000, () => socket.destroy(new Error('no answer through Traefik')));
    socket.write(payload);
  });
}

e2e('priority: our override makes the narrow router win over the wider Pangolin router, then lose', async (t) => {
  const request = { entryPoint: 'websecure', host: 'pri.test', path: '/api/items' };
  t.is((await stack.traefik.waitForReply(request, (r) => r.status === 200)).json.backend, 'wide');

  await putConfig('1-narrow-router', 'priority', { priority: 300 });
  const [router] = await stack.traefik.waitForRouters(['1-narrow-router']);
  t.is(router.status, 'enabled');
  await stack.traefik.waitForReply(request, (r) => r.json?.backend === 'narrow');
  t.is(backend('narrow').requests.at(-1)?.url, '/api/items');
  // a path only the wide router matches still goes there
  t.is((await stack.traefik.request({ ...request, path: '/other' })).json.backend, 'wide');

  await putConfig('1-narrow-router', 'priority', { priority: 150 });
  const lost = await stack.traefik.waitForReply(request, (r) => r.json?.backend === 'wide');
  t.is(lost.status, 200);
  t.is((await stack.traefik.api('/api/http/routers/1-narrow-router@http')).priority, 150);
});

e2e('entry points: the override moves the router to another entry point', async (t) => {
  const moved = await putConfig('3-ep-router', 'http', { entrypoints: ['alt'] });
  t.deepEqual(moved.config.http.entrypoints, ['alt']);
  // the router keeps Pangolin's tls: it answers HTTPS on alt, and websecure no longer has it
  const alt = { host: 'ep.test', path: '/moved', tls: true };
  const reply = await stack.traefik.waitForReply({ entryPoint: 'websecure', host: 'ep.test' }, (r) => r.status === 404);
  t.is(reply.status, 404);
  const onAlt = await send(stack.traefik.ports.alt, alt);
  t.is(onAlt.status, 200);
  t.is(onAlt.json.backend, 'ep');
  t.is(onAlt.json.url, '/moved');
  const [router] = await stack.traefik.waitForRouters(['3-ep-router']);
  t.deepEqual(router.entryPoints, ['alt']);

  await putConfig('3-ep-router', 'http', { entrypoints: ['websecure', 'alt'] });
  const back = await stack.traefik.waitForReply({ entryPoint: 'websecure', host: 'ep.test' }, (r) => r.status === 200);
  t.is(back.json.backend, 'ep');
  t.is((await send(stack.traefik.ports.alt, alt)).json.backend, 'ep');
});

e2e('TLS: a plain-HTTP resource moved to websecure is served with Traefik’s default certificate', async (t) => {
  const before = await stack.traefik.waitForReply({ host: 'plain.test' }, (r) => r.status === 200);
  t.is(before.json.backend, 'plain');

  await putConfig('4-plain-router', 'http', { entrypoints: ['websecure'] });
  const resource = await putConfig('4-plain-router', 'tls', {
    cert_resolver: null,
    domains: [{ main: 'plain.test' }],
    options: null,
  });
  t.deepEqual(resource.config.tls.domains, [{ main: 'plain.test', sans: [] }]);
  const reply = await stack.traefik.waitForReply(
    { entryPoint: 'websecure', host: 'plain.test', path: '/secure' },
    (r) => r.status === 200,
  );
  t.is(reply.json.backend, 'plain');
  t.is(reply.json.headers['x-forwarded-proto'], 'https');
  // websecure has TLS of its own: the first document (entry point only) already answers there, so
  // wait for Traefik to run the second one (the domains) rather than taking the first 200 as proof
  const router = await waitFor(async () => {
    const runtime = await stack.traefik.api('/api/http/routers/4-plain-router@http');
    return runtime.tls?.domains ? runtime : null;
  }, 2_000);
  t.deepEqual(router.tls.domains, [{ main: 'plain.test' }]);
  t.deepEqual(router.entryPoints, ['websecure']);
  const session = await handshake(stack.traefik.ports.websecure, 'plain.test');
  session.socket.destroy();
  t.is(session.subject, 'TRAEFIK DEFAULT CERT');
  t.is((await stack.traefik.request({ host: 'plain.test' })).status, 404, 'web no longer routes it');
});

e2e('tls.options: a TLS 1.3-only option refuses a TLS 1.2 client and serves a TLS 1.3 one', async (t) => {
  const websecure = stack.traefik.ports.websecure;
  const old = await handshake(websecure, 'modern.test', { maxVersion: 'TLSv1.2' });
  old.socket.destroy();
  t.is(old.protocol, 'TLSv1.2', 'the default options accept TLS 1.2');

  await putConfig('5-modern-router', 'tls', { cert_resolver: null, domains: null, options: 'modern' });
  const router = await waitFor(async () => {
    const runtime = await stack.traefik.api('/api/http/routers/5-modern-router@http');
    return runtime.tls?.options === 'modern' ? runtime : null;
  }, 2_000);
  t.is(router.status, 'enabled');
  const error = await t.throwsAsync(handshake(websecure, 'modern.test', { maxVersion: 'TLSv1.2' }));
  t.regex(String(error?.message), /alert|protocol version|socket disconnected/i);
  const modern = await handshake(websecure, 'modern.test', { minVersion: 'TLSv1.3' });
  modern.socket.destroy();
  t.is(modern.protocol, 'TLSv1.3');
  const reply = await stack.traefik.request({ entryPoint: 'websecure', host: 'modern.test' });
  t.is(reply.json.backend, 'modern');
});

e2e('headers: request headers set and removed for the backend, response headers for the client', async (t) => {
  await putConfig('6-hdr-router', 'headers', {
    request: { 'X-Added': 'yes', 'X-Drop': '' },
    response: { 'X-Served-By': 'stack-manager', 'X-Backend': '' },
  });
  const reply = await stack.traefik.waitForReply(
    { entryPoint: 'websecure', host: 'hdr.test', headers: { 'X-Drop': 'secret' } },
    (r) => r.headers['x-served-by'] === 'stack-manager',
  );
  t.is(reply.json.backend, 'hdr');
  t.is(reply.json.headers['x-added'], 'yes');
  t.false('x-drop' in reply.json.headers, 'the client’s X-Drop is removed');
  t.false('x-backend' in reply.headers, 'the backend’s X-Backend is removed');
  t.is(backend('hdr').requests.at(-1)?.headers['x-added'], 'yes');
});

e2e('TCP: HostSNI router to a TCP echo service; derived servers; Pangolin’s own TCP router', async (t) => {
  const created = await stack.sm.call('POST', '/api/services', {
    name: 'Echo TCP',
    id: 'echo-tcp',
    type: 'loadBalancer',
    protocol: 'tcp',
    config: { servers: [{ address: `127.0.0.1:${echoPort}` }] },
  });
  t.is(created.status, 201, created.text);
  await putConfig('7-tcp-router', 'tcp', { enabled: true, entrypoints: ['tcp-echo'], service_id: 'echo-tcp' });
  // derived: the TCP service is the HTTP service's servers (host:port of the backend)
  await putConfig('8-derived-router', 'tcp', { enabled: true, entrypoints: ['tcp-echo'] });
  const [tcpRouter, derivedRouter] = await stack.traefik.waitForRouters(
    ['7-tcp-router_tcp', '8-derived-router_tcp'],
    'tcp',
  );
  t.is(tcpRouter.status, 'enabled');
  t.is(tcpRouter.rule, 'HostSNI(`tcp.test`)');
  t.is(derivedRouter.status, 'enabled');
  const port = stack.traefik.ports['tcp-echo'];

  const session = await handshake(port, 'tcp.test');
  t.is(await exchange(session.socket, 'ping over TLS\n', (text) => text.endsWith('\n')), 'ping over TLS\n');

  const derived = await handshake(port, 'derived.test');
  const raw = await exchange(
    derived.socket,
    'GET /raw HTTP/1.1\r\nHost: derived.test\r\nConnection: close\r\n\r\n',
    () => false,
  );
  t.regex(raw, /^HTTP\/1\.1 200/);
  t.regex(raw, /"backend":"derived"/);
  t.is(backend('derived').requests.at(-1)?.url, '/raw');

  const pangolin = net.connect(stack.traefik.ports['tcp-pangolin'], '127.0.0.1');
  await new Promise((resolve) => pangolin.once('connect', resolve));
  t.is(await exchange(pangolin, 'plain tcp\n', (text) => text.endsWith('\n')), 'plain tcp\n');
});

e2e(
  'TCP on a resource without TLS: HostSNI(`*`), the only rule Traefik routes without TLS, answers plain TCP',
  async (t) => {
    const created = await stack.sm.call('POST', '/api/services', {
      name: 'Echo TCP plain',
      id: 'echo-tcp-plain',
      type: 'loadBalancer',
      protocol: 'tcp',
      config: { servers: [{ address: `127.0.0.1:${echoPort}` }] },
    });
    t.is(created.status, 201, created.text);
    await putConfig('9-plaintcp-router', 'tcp', {
      enabled: true,
      entrypoints: ['tcp-plain'],
      service_id: 'echo-tcp-plain',
    });
    const [router] = await stack.traefik.waitForRouters(['9-plaintcp-router_tcp'], 'tcp');
    // before: HostSNI(`plaintcp.test`), which Traefik disabled: 'invalid rule: "HostSNI(`plaintcp.test`)" ,
    // has HostSNI matcher, but no TLS on router'
    t.is(router.status, 'enabled', JSON.stringify(router));
    t.is(router.rule, 'HostSNI(`*`)');
    const socket = net.connect(stack.traefik.ports['tcp-plain'], '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    t.is(await exchange(socket, 'no tls\n', (text) => text.endsWith('\n')), 'no tls\n');
  },
);
