/**
 * Traefik's plugin registry on loopback. Traefik downloads every `experimental.plugins` entry from
 * the fixed `https://plugins.traefik.io/public/` at each start (`download`, then `validate` with
 * the archive's SHA-256 in `X-Plugin-Hash`); its HTTP client honours `HTTPS_PROXY` and Go reads
 * extra roots from `SSL_CERT_FILE`. So the test Traefik gets `env()`: a CONNECT proxy on 127.0.0.1
 * that hands every tunnel to a local HTTPS server holding a self-signed certificate for
 * plugins.traefik.io, which serves zips of local plugin sources. Nothing leaves the machine.
 * `url` serves the same over plain HTTP: Stack Manager's `plugins_registry.url` for vendoring
 * (API.md §4.20), whose download needs neither the proxy nor the certificate.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import forge from 'node-forge';
import { tempDir } from './build.ts';
import { zipSource } from './zip.ts';

export interface PluginRegistry {
  /** Environment for the Traefik process: HTTPS_PROXY and SSL_CERT_FILE. */
  env: Record<string, string>;
  /** `GET` paths the registry answered, in order (`/public/download/<module>/<version>`, `/public/validate/…`). */
  requests: string[];
  /** The same registry over plain HTTP on 127.0.0.1 (`http://127.0.0.1:<port>`), for Stack Manager. */
  url: string;
  /** Closes every listener: from now on the registry is unreachable (Traefik's download fails). */
  stop(): Promise<void>;
}

/** A self-signed certificate (also its own CA) for plugins.traefik.io. */
function selfSigned(): { cert: string; key: string } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const subject = [{ name: 'commonName', value: 'plugins.traefik.io' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'plugins.traefik.io' }] },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** Serves `plugins` (module → source dir) at `version` each; closed when the test ends. */
export async function startPluginRegistry(
  t: ExecutionContext,
  plugins: Record<string, { version: string; source: string }>,
): Promise<PluginRegistry> {
  const archives = new Map<string, { zip: Buffer; hash: string }>();
  for (const [moduleName, plugin] of Object.entries(plugins)) {
    const zip = await zipSource(plugin.source, `${path.basename(moduleName)}-${plugin.version.slice(1)}`);
    archives.set(`${moduleName}/${plugin.version}`, { zip, hash: createHash('sha256').update(zip).digest('hex') });
  }
  const requests: string[] = [];
  const { cert, key } = selfSigned();
  const serve = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = request.url ?? '';
    requests.push(url);
    const download = /^\/public\/download\/(.+)$/.exec(url);
    const validate = /^\/public\/validate\/(.+)$/.exec(url);
    const archive = archives.get((download ?? validate)?.[1] ?? '');
    if (!archive) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    } else if (download) {
      response.writeHead(200, { 'content-type': 'application/zip' }).end(archive.zip);
    } else {
      // the registry's integrity check: the hash Traefik computed over the archive it stored
      response.writeHead(request.headers['x-plugin-hash'] === archive.hash ? 200 : 409).end();
    }
  };
  const registry = https.createServer({ cert, key }, serve);
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  const plain = http.createServer(serve);
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  const registryPort = (registry.address() as net.AddressInfo).port;

  // HTTPS_PROXY: every CONNECT (Traefik asks for plugins.traefik.io:443) is tunnelled to the registry
  const proxy = http.createServer((_request, response) => response.writeHead(405).end());
  const tunnels = new Set<net.Socket>(); // CONNECT sockets leave the HTTP server: closed by hand
  proxy.on('connect', (_request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnels.add(client);
    client.on('close', () => tunnels.delete(client));
    const upstream = net.connect(registryPort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyPort = (proxy.address() as net.AddressInfo).port;

  const caFile = path.join(await tempDir(t, 'sm-plugin-registry-'), 'registry-ca.pem');
  await writeFile(caFile, cert);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const tunnel of tunnels) tunnel.destroy();
    for (const server of [registry, proxy, plain]) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  };
  t.teardown(stop);
  return {
    env: { HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`, SSL_CERT_FILE: caFile },
    requests,
    url: `http://127.0.0.1:${(plain.address() as net.AddressInfo).port}`,
    stop,
  };
}
