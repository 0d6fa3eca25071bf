import test, { type ExecutionContext } from 'ava';
import { createRequire } from 'node:module';
import websocket from '@fastify/websocket';
import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { connect as connectTcp, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { AppHost, type ServerTimeouts } from '../../core/app-host.ts';
import { buildApp } from '../../core/app.ts';
import type { BuiltinGroup } from '../../core/types.ts';
import { builtinGroups } from '../../plugins/index.ts';
import { tempDir, testConfig } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';

const EXAMPLE = path.join(import.meta.dirname, '..', '..', 'examples', 'hello-plugin');

/** A test-only group with a route that answers when the test says so. */
function slowGroup(gate: Promise<void>, started: () => void): BuiltinGroup {
  return {
    name: 'slow',
    plugin: async (app: FastifyInstance) => {
      app.get('/api/test/slow', { config: { auth: 'public' } }, async () => {
        started();
        await gate;
        return { done: true };
      });
    },
  };
}

test('a reload swaps in a new instance on the same socket: new plugins load, in-flight requests finish on the old one', async (t) => {
  const dir = await tempDir(t);
  const pluginsDir = path.join(dir, 'plugins');
  await mkdir(pluginsDir);
  const config = testConfig(path.join(dir, 'data'), {
    auth: { mode: 'off' },
    templates: { seed: false },
    plugins: { dir: pluginsDir, enabled: ['*'], config: {} },
  });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started!: () => void;
  const reachedOld = new Promise<void>((resolve) => {
    started = resolve;
  });
  const silent = (await import('pino')).default({ level: 'silent' });
  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({
        config,
        groups: [...builtinGroups, slowGroup(gate, started)],
        generation,
        serverFactory,
        logger: false,
      }),
    silent,
  );
  t.teardown(() => host.close());
  const first = await host.start();
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;

  t.is((await fetch(`${base}/api/ext/hello/greeting`)).status, 404);
  const inFlight = fetch(`${base}/api/test/slow`);
  await reachedOld; // the request is being handled by the first instance
  await cp(EXAMPLE, path.join(pluginsDir, 'hello-plugin'), { recursive: true });
  const reloading = host.reload();
  // the new instance answers new requests while the old one still holds the slow one
  await waitFor(() => host.generation === 2, 10_000);
  const greeting = await fetch(`${base}/api/ext/hello/greeting`);
  t.is(greeting.status, 200);
  const plugins = await fetch(`${base}/api/system/plugins`);
  t.is(plugins.headers.get('x-app-generation'), '2');
  release();
  const slow = await inFlight;
  t.is(slow.status, 200);
  t.deepEqual(await slow.json(), { done: true });
  t.true(await reloading);
  t.not(host.app, first);
});

test('a reload whose build fails keeps the running instance', async (t) => {
  const dir = await tempDir(t);
  const config = testConfig(path.join(dir, 'data'), { auth: { mode: 'off' }, templates: { seed: false } });
  const silent = (await import('pino')).default({ level: 'silent' });
  const host = new AppHost(async (generation, serverFactory) => {
    if (generation > 1) throw new Error('broken build');
    return buildApp({ config, groups: builtinGroups, generation, serverFactory, logger: false });
  }, silent);
  t.teardown(() => host.close());
  const app = await host.start();
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  t.false(await host.reload());
  t.is(host.app, app);
  t.is(host.generation, 1);
  t.is((await fetch(`${base}/api/health`)).status, 200);
});

test('after close() starts, a reload is refused and builds nothing', async (t) => {
  const dir = await tempDir(t);
  const config = testConfig(path.join(dir, 'data'), { auth: { mode: 'off' } });
  const silent = (await import('pino')).default({ level: 'silent' });
  let builds = 0;
  const host = new AppHost((generation, serverFactory) => {
    builds++;
    return buildApp({ config, groups: builtinGroups, generation, serverFactory, logger: false });
  }, silent);
  await host.start();
  const closing = host.close();
  t.false(await host.reload());
  await closing;
  t.is(builds, 1);
});

interface WsClient {
  on(event: 'message', listener: (data: Buffer) => void): void;
  on(event: 'close', listener: (code: number) => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (url: string) => WsClient;

/** A test-only group with a WebSocket route that says which instance answered and closes as the logs streams do. */
function wsGroup(generation: number): BuiltinGroup {
  return {
    name: 'ws',
    plugin: async (app: FastifyInstance) => {
      const sockets = new Set<{ send(text: string): void; close(code: number): void }>();
      await app.register(websocket, {
        preClose(done: () => void) {
          for (const socket of sockets) socket.close(app.lifecycle.restarting ? 1012 : 1001);
          done();
        },
      } as never);
      app.get('/api/test/ws', { websocket: true, config: { auth: 'public' } }, (socket) => {
        sockets.add(socket);
        socket.send(`generation ${generation}`);
      });
    },
  };
}

/** Opens a client and resolves with its first message and a promise of its close code. */
async function connect(url: string): Promise<{ first: string; closed: Promise<number> }> {
  const client = new WebSocket(url);
  const closed = new Promise<number>((resolve) => client.on('close', resolve));
  const first = await new Promise<string>((resolve, reject) => {
    client.on('message', (data) => resolve(String(data)));
    client.on('error', reject);
  });
  return { first, closed };
}

test("WebSocket upgrades reach the current instance only; a reload closes the old one's sockets with 1012, shutdown with 1001", async (t) => {
  const dir = await tempDir(t);
  const config = testConfig(path.join(dir, 'data'), { auth: { mode: 'off' } });
  const silent = (await import('pino')).default({ level: 'silent' });
  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({ config, groups: [...builtinGroups, wsGroup(generation)], generation, serverFactory, logger: false }),
    silent,
  );
  t.teardown(() => host.close());
  await host.start();
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', () => resolve()));
  const url = `ws://127.0.0.1:${(host.server.address() as AddressInfo).port}/api/test/ws`;

  const before = await connect(url);
  t.is(before.first, 'generation 1');
  t.true(await host.reload());
  t.is(await before.closed, 1012);
  const after = await connect(url);
  t.is(after.first, 'generation 2', 'only the new instance answers the upgrade');
  await host.close();
  t.is(await after.closed, 1001);
});

/** Sends `text` on a raw connection and resolves with everything received until the server closes it. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

/** A started host of the built-in groups (auth off) with `timeouts`, listening on a loopback port. */
async function listeningHost(
  t: ExecutionContext,
  timeouts: ServerTimeouts,
  authMode: 'off' | 'all' = 'off',
): Promise<{ host: AppHost; port: number }> {
  const dir = await tempDir(t);
  const config = testConfig(path.join(dir, 'data'), { auth: { mode: authMode }, templates: { seed: false } });
  const silent = (await import('pino')).default({ level: 'silent' });
  const host = new AppHost(
    (generation, serverFactory) =>
      buildApp({ config, groups: builtinGroups, generation, serverFactory, logger: false }),
    silent,
    undefined,
    timeouts,
  );
  await host.start();
  await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', () => resolve()));
  return { host, port: (host.server.address() as AddressInfo).port };
}

test('the shared server applies the request timeout and keeps idle connections 72 s, as Fastify does on its own servers', async (t) => {
  const { host, port } = await listeningHost(t, { requestTimeout: 300, checkIntervalMs: 50 });
  t.teardown(() => host.close());
  // a client that never finishes its headers is answered 408 and disconnected
  const slow = await rawExchange(port, 'GET /api/health HTTP/1.1\r\nHost: x\r\n');
  t.regex(slow, /^HTTP\/1\.1 408 /);
  // a complete request is served, and the connection is offered for 72 s
  const response = await fetch(`http://127.0.0.1:${port}/api/health`);
  await response.arrayBuffer();
  t.is(response.status, 200);
  t.is(response.headers.get('keep-alive'), 'timeout=72');
});

test('close() ends connections that never sent a request (Node does not count them idle)', async (t) => {
  const { host, port } = await listeningHost(t, { requestTimeout: 30_000 });
  // a served keep-alive connection, and one that connects and stays silent
  const response = await fetch(`http://127.0.0.1:${port}/api/health`);
  await response.arrayBuffer();
  const silentClient = connectTcp(port, '127.0.0.1');
  t.teardown(() => silentClient.destroy());
  await new Promise((resolve) => silentClient.once('connect', resolve));
  await waitFor(
    () => new Promise<number>((resolve) => host.server.getConnections((_err, n) => resolve(n))).then((n) => n === 2),
    1_000,
  );
  const clientClosed = new Promise((resolve) => silentClient.once('close', resolve));
  await host.close();
  await clientClosed;
  t.false(host.server.listening);
});

test('close() ends an upgraded socket no WebSocket owns: a refused upgrade whose client holds the connection', async (t) => {
  const { host, port } = await listeningHost(t, {}, 'all');
  const client = connectTcp(port, '127.0.0.1');
  t.teardown(() => client.destroy());
  await new Promise((resolve) => client.once('connect', resolve));
  const answer = new Promise<string>((resolve) => client.once('data', (chunk) => resolve(chunk.toString('latin1'))));
  client.write(
    'GET /api/auth/whoami HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  );
  t.regex(await answer, /^HTTP\/1\.1 401 /, 'refused before any WebSocket exists');
  const clientClosed = new Promise((resolve) => client.once('close', resolve));
  // before: close() waited for this socket until the client left (production: the 10 s grace, then exit 1)
  await host.close();
  await clientClosed;
  t.false(host.server.listening);
});
