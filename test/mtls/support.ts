/** Helpers of the mTLS tests: an app, a CA and clients through the API, file snapshots, CRL reading. */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import type { FastifyInstance } from 'fastify';
import forge from 'node-forge';
import { build, tempDir } from '../helpers/build.ts';
import { call } from '../resources/support.ts';

export { assertClientError, call } from '../resources/support.ts';

const run = promisify(execFile);

/** An app with auth off and its data dir. */
export async function mtlsApp(
  t: ExecutionContext,
  config: Record<string, unknown> = {},
): Promise<{ app: FastifyInstance; dataDir: string }> {
  const dataDir = path.join(await tempDir(t), 'data');
  const app = await build(t, { dataDir, config: { auth: { mode: 'off' }, ...config } });
  return { app, dataDir };
}

/** Creates a CA with a 2048-bit key (fast) through the API; asserts 201. */
export async function createCa(
  t: ExecutionContext,
  app: FastifyInstance,
  body: Record<string, unknown> = {},
  query = '',
): Promise<any> {
  const r = await call(app, {
    method: 'POST',
    url: `/api/mtls/ca${query}`,
    payload: { common_name: 'Test CA', organization: 'Acme', country: 'DE', key_size: 2048, ...body },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

export const PASSWORD = 'correct horse battery';

/** Issues a client certificate with a 2048-bit key; asserts 201. */
export async function createClient(
  t: ExecutionContext,
  app: FastifyInstance,
  body: Record<string, unknown> = {},
): Promise<any> {
  const r = await call(app, {
    method: 'POST',
    url: '/api/mtls/clients',
    payload: { name: 'Laptop', p12_password: PASSWORD, key_size: 2048, ...body },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

/** The PKCS#12 bytes of a client (asserts 200). */
export async function downloadP12(t: ExecutionContext, app: FastifyInstance, id: string): Promise<Buffer> {
  const r = await app.inject({ url: `/api/mtls/clients/${id}/download` });
  t.is(r.statusCode, 200, r.body);
  return r.rawPayload;
}

/** A CA and a client with a certificate from a PKCS#12, as PEM (what Traefik would forward). */
export function certificateFromP12(p12: Buffer, password = PASSWORD): string {
  const parsed = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(p12.toString('binary')), password);
  const bags = parsed.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? [];
  const leaf = bags
    .map((b) => b.cert!)
    .find((c) => !c.getExtension('basicConstraints') || !(c.getExtension('basicConstraints') as { cA?: boolean }).cA);
  return forge.pki.certificateToPem(leaf!);
}

/** The X-Forwarded-Tls-Client-Cert value Traefik v3 sends for these PEM certificates. */
export function forwardedHeader(...pems: string[]): string {
  return pems.map((pem) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\n/g, '')).join(',');
}

/** Every file under `data/mtls` with its bytes, mode and mtime: proof that nothing was written. */
export async function mtlsFiles(
  dataDir: string,
): Promise<Record<string, { bytes: string; mode: number; mtimeMs: number }>> {
  const out: Record<string, { bytes: string; mode: number; mtimeMs: number }> = {};
  const walk = async (dir: string) => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const file = path.join(dir, name);
      const s = await stat(file);
      if (s.isDirectory()) await walk(file);
      else
        out[path.relative(dataDir, file)] = {
          bytes: (await readFile(file)).toString('base64'),
          mode: s.mode & 0o777,
          mtimeMs: s.mtimeMs,
        };
    }
  };
  await walk(path.join(dataDir, 'mtls'));
  return out;
}

/** Whether openssl is on PATH (the CRL is then also checked with it). */
export const hasOpenssl = (process.env.PATH ?? '')
  .split(path.delimiter)
  .some((dir) => dir && existsSync(path.join(dir, 'openssl')));

/** `openssl crl -text`, verified against the CA file; null when openssl is missing. */
export async function opensslCrlText(crlFile: string, caFile: string): Promise<string | null> {
  if (!hasOpenssl) return null;
  const { stdout, stderr } = await run('openssl', ['crl', '-in', crlFile, '-CAfile', caFile, '-noout', '-text']);
  return `${stdout}\n${stderr}`;
}

/** Serials (lower-case hex) and CRL number of a PEM CRL, read with forge's ASN.1 parser. */
export function parseCrl(pem: string): { number: number; serials: string[]; nextUpdate: Date } {
  const der = forge.pem.decode(pem)[0].body;
  const list = forge.asn1.fromDer(der) as any;
  const tbs = list.value[0].value as any[];
  // version, signature, issuer, thisUpdate, nextUpdate, [revokedCertificates], [0] extensions
  const nextUpdate = forge.asn1.utcTimeToDate(tbs[4].value);
  const revoked = tbs.length > 6 || (tbs[5] && tbs[5].tagClass === forge.asn1.Class.UNIVERSAL) ? tbs[5] : null;
  const serials = revoked
    ? revoked.value.map((entry: any) => forge.util.bytesToHex(entry.value[0].value).replace(/^0+/, ''))
    : [];
  const extensions = tbs[tbs.length - 1].value[0].value as any[];
  const numberExt = extensions.find((e) => forge.asn1.derToOid(e.value[0].value) === '2.5.29.20');
  const numberAsn1 = forge.asn1.fromDer(numberExt.value[1].value) as any;
  return { number: parseInt(forge.util.bytesToHex(numberAsn1.value), 16), serials, nextUpdate };
}

/** A self-signed server certificate for 127.0.0.1 (the server side of the handshake tests). */
export function serverIdentity(): { key: string; cert: string } {
  const pair = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const privateKey = forge.pki.privateKeyFromPem(pair.privateKey) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(pair.publicKey);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ shortName: 'CN', value: 'localhost' }]);
  cert.setIssuer([{ shortName: 'CN', value: 'localhost' }]);
  cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }]);
  cert.sign(privateKey, forge.md.sha256.create());
  return { key: pair.privateKey, cert: forge.pki.certificateToPem(cert) };
}

export interface HandshakeServer {
  port: number;
  server: tls.Server;
  /** The client certificates the server accepted (subject CN of each authorized connection). */
  accepted: string[];
}

/** A TLS server that requires a client certificate of `caPem` (and honours `crlPem` when given). */
export async function handshakeServer(t: ExecutionContext, caPem: string, crlPem?: string): Promise<HandshakeServer> {
  const accepted: string[] = [];
  const server = tls.createServer(
    { ...serverIdentity(), ca: caPem, requestCert: true, rejectUnauthorized: true, ...(crlPem ? { crl: crlPem } : {}) },
    (socket) => {
      if (socket.authorized) accepted.push(String(socket.getPeerCertificate().subject.CN));
      socket.end('hello\n');
    },
  );
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, server, accepted };
}

/** Connects with optional PKCS#12 credentials: the server's greeting, or the error that ended the connection. */
export async function handshake(
  port: number,
  credentials?: { pfx: Buffer; passphrase: string },
): Promise<{ greeting: string | null; error: string | null }> {
  return new Promise((resolve) => {
    let greeting = '';
    // the server's identity is not under test here: only whether it accepts our client certificate
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...(credentials ?? {}) });
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      greeting += chunk;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve({ greeting: null, error: err.code ?? err.message }));
    socket.on('close', () =>
      resolve({ greeting: greeting || null, error: greeting ? null : 'closed without greeting' }),
    );
  });
}
