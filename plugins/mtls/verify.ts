/**
 * The revocation check behind `/api/mtls/verify` (API.md §4.8): Traefik's forwardAuth calls it
 * with `X-Forwarded-Tls-Client-Cert` as set by `passTLSClientCert {pem: true}`: each certificate's
 * PEM without the BEGIN/END lines and without newlines, several joined by `,` (Traefik v3
 * `sanitize()`). Traefik v2 also URL-escaped that value, so `%XX` sequences are decoded first.
 */
import { X509Certificate } from 'node:crypto';
import { normalizeSerial } from './x509.ts';

export const CLIENT_CERT_HEADER = 'x-forwarded-tls-client-cert';

/** The certificates in the header value, in order; unparsable parts are skipped. */
export function parseForwardedCertificates(header: string | string[] | undefined): X509Certificate[] {
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (!raw) return [];
  let value = raw;
  if (value.includes('%')) {
    try {
      value = decodeURIComponent(value);
    } catch {
      return [];
    }
  }
  const certificates: X509Certificate[] = [];
  for (const part of value.split(',')) {
    const base64 = part.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
    if (base64 === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) continue;
    try {
      certificates.push(new X509Certificate(Buffer.from(base64, 'base64')));
    } catch {
      // not a certificate: the TLS layer and the plugin decide about such requests
    }
  }
  return certificates;
}

/**
 * The serial of the first certificate in the header that our CA issued and that is revoked, or
 * null. The serial is looked up first, so the signature is checked only for revoked serials (the
 * check runs on every request through an mTLS resource).
 */
export function revokedSerialIn(
  header: string | string[] | undefined,
  ca: X509Certificate | null,
  revoked: ReadonlySet<string>,
): string | null {
  if (!ca || revoked.size === 0) return null;
  for (const cert of parseForwardedCertificates(header)) {
    const serial = normalizeSerial(cert.serialNumber);
    if (!revoked.has(serial)) continue;
    if (cert.checkIssued(ca) && cert.verify(ca.publicKey)) return serial;
  }
  return null;
}
