/** Certificates for the expiry tests: self-signed with node-forge, expiring when the test says. */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

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
