/**
 * Certificates for the expiry tests (API.md §4.21 `certs`, GET /api/certificates, the UI's
 * Certificates screen): self-signed with node-forge, expiring when the test says; Traefik's
 * acme.json holding them; and a real Traefik serving one, whose metrics are the check's other source.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import forge from 'node-forge';
import { stringify } from 'yaml';
import { tempDir } from './build.ts';
import { startTraefik, type Traefik } from './traefik.ts';

export interface TestCertificate {
  cn: string;
  cert: string;
  key: string;
  /** notAfter, unix seconds (X.509 keeps whole seconds) */
  notAfter: number;
}

/** A self-signed RSA certificate for `cn` whose notAfter is `notAfter` (issued a month earlier). */
export function makeCertificate(cn: string, notAfter: Date): TestCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(publicKey);
  certificate.serialNumber = `01${randomBytes(8).toString('hex')}`;
  const end = new Date(Math.floor(notAfter.getTime() / 1000) * 1000);
  certificate.validity.notBefore = new Date(end.getTime() - 30 * 86_400_000);
  certificate.validity.notAfter = end;
  const subject = [{ name: 'commonName', value: cn }];
  certificate.setSubject(subject);
  certificate.setIssuer(subject);
  certificate.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 2, value: cn }] }]);
  certificate.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return { cn, cert: forge.pki.certificateToPem(certificate), key: privateKey, notAfter: end.getTime() / 1000 };
}

/** Traefik's acme.json with one resolver holding `certificates` (base64 PEM, as Traefik writes them). */
export function acmeJson(certificates: TestCertificate[]): string {
  return JSON.stringify({
    letsencrypt: {
      Account: { Email: 'ops@example.test', Registration: null, PrivateKey: 'bm90LWEta2V5', KeyType: '4096' },
      Certificates: certificates.map((certificate) => ({
        domain: { main: certificate.cn },
        certificate: Buffer.from(certificate.cert).toString('base64'),
        key: Buffer.from(certificate.key).toString('base64'),
        Store: 'default',
      })),
    },
  });
}

/**
 * A real Traefik (helpers/traefik.ts) with its metrics on, serving `certificate` from a file
 * provider: its `traefik_tls_certs_not_after` series names it. The provider URL answers nothing:
 * this Traefik serves only its metrics and the file's certificate.
 */
export async function traefikServing(t: ExecutionContext, certificate: TestCertificate): Promise<Traefik> {
  const dir = await tempDir(t, 'sm-cert-traefik-');
  await writeFile(path.join(dir, 'edge.crt'), certificate.cert);
  await writeFile(path.join(dir, 'edge.key'), certificate.key, { mode: 0o600 });
  const dynamic = path.join(dir, 'tls.yml');
  await writeFile(
    dynamic,
    stringify({
      tls: { certificates: [{ certFile: path.join(dir, 'edge.crt'), keyFile: path.join(dir, 'edge.key') }] },
    }),
  );
  return startTraefik(t, {
    providerUrl: 'http://127.0.0.1:9/api/v1/proxy-config',
    metrics: true,
    editStatic: (config) => {
      config.providers.file = { filename: dynamic };
    },
  });
}
