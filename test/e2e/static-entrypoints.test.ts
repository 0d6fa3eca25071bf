/**
 * Entry points for raw TCP resources (API.md §4.20) with a real Traefik: a Pangolin TCP resource on
 * `tcp-<port>`, which Traefik's static config lacks → `POST /api/static/entrypoints/sync` adds it to
 * the file Traefik reads (and publishes the port on Gerbil in the compose file) → Traefik restarted on
 * it routes a TCP connection through the new entry point to the echo backend.
 */
import net from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import { tempDir } from '../helpers/build.ts';
import { startStack } from '../helpers/traefik-stack.ts';
import { freePort, traefikTest } from '../helpers/traefik.ts';
import { waitFor } from '../helpers/wait.ts';

const e2e = traefikTest(test);

const COMPOSE = `services:
  gerbil:
    image: fosrl/gerbil:1.0.0
    ports:
      - "443:443" # HTTPS
  traefik:
    image: traefik:v3.5
    network_mode: service:gerbil
`;

/** One line through `port` on 127.0.0.1: the echo (null when the connection is refused). */
function roundTrip(port: number, line: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.endsWith('\n')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNREFUSED' ? resolve(null) : reject(err)));
    socket.setTimeout(30_000, () => socket.destroy(new Error('no answer through Traefik')));
    socket.write(line);
  });
}

e2e(
  'sync adds the missing tcp-<port> entry point a Pangolin TCP resource uses; restarted, Traefik routes TCP through it',
  async (t) => {
    const echo = net.createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => echo.close(() => resolve())));
    const echoPort = (echo.address() as net.AddressInfo).port;
    const port = await freePort();
    const entryPoint = `tcp-${port}`;

    const dir = await tempDir(t, 'sm-static-e2e-');
    const staticFile = path.join(dir, 'traefik_config.yml');
    const composeFile = path.join(dir, 'docker-compose.yml');
    await writeFile(composeFile, COMPOSE);
    let generated: Record<string, unknown> = {};
    const stack = await startStack(t, {
      config: { proxy: { static_config_path: staticFile }, stack: { compose_file: composeFile } },
      traefik: {
        editStatic: (config) => (generated = config),
        // the harness's static config, written where Stack Manager edits it, with a comment to keep
        writeStatic: async () => {
          await writeFile(staticFile, `# Traefik static configuration\n${stringify(generated)}`);
          return staticFile;
        },
      },
      editDocument(document) {
        // Pangolin's raw TCP resource (as fixtures/pangolin/traefik-config.json's 4-SSH-router)
        document.tcp = {
          routers: { '11-raw-router': { entryPoints: [entryPoint], rule: 'HostSNI(`*`)', service: '11-raw-service' } },
          services: { '11-raw-service': { loadBalancer: { servers: [{ address: `127.0.0.1:${echoPort}` }] } } },
        };
      },
    });
    await waitFor(() => {
      const served = stack.sm.app.proxyConfig.current()?.served as { tcp?: { routers?: object } } | undefined;
      return served?.tcp?.routers !== undefined && '11-raw-router' in served.tcp.routers;
    }, 2_000);
    t.is(await roundTrip(port, 'before\n'), null, 'nothing listens on the port before the sync');

    const listed = await stack.sm.call('GET', '/api/static/entrypoints');
    t.is(listed.status, 200, listed.text);
    t.like(
      listed.json.find((entry: { name: string }) => entry.name === entryPoint),
      { in_static_config: false, port, protocol: 'tcp', published_on_gerbil: false, routers: ['11-raw-router'] },
    );

    const sync = await stack.sm.call('POST', '/api/static/entrypoints/sync', {});
    t.is(sync.status, 200, sync.text);
    t.deepEqual(sync.json.added, [entryPoint]);
    t.deepEqual(sync.json.published, [`${port}:${port}`]);
    t.deepEqual(sync.json.restart_required, ['traefik', 'gerbil']);
    const text = await readFile(staticFile, 'utf8');
    t.true(text.startsWith('# Traefik static configuration\n'), 'the comment stays');
    t.true(text.includes(`  ${entryPoint}:\n    address: ":${port}"\n`), text);
    t.true((await readFile(composeFile, 'utf8')).includes(`      - "443:443" # HTTPS\n      - "${port}:${port}"\n`));

    await stack.traefik.restart();
    const [router] = await stack.traefik.waitForRouters(['11-raw-router'], 'tcp');
    t.is(router.status, 'enabled', JSON.stringify(router));
    t.is(await waitFor(() => roundTrip(port, 'through the new entry point\n'), 2_000), 'through the new entry point\n');
  },
);
