/**
 * The certificate authority (API.md §4.8): creating a self-signed RSA CA, loading the stored one,
 * and the metadata the API shows about it. The private key never leaves this group.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import type Forge from 'node-forge';
import { forge } from './forge.ts';
import {
  DAY_MS,
  fingerprintSha256,
  formatName,
  generateRsaKeyPair,
  nameAttributes,
  pemToDer,
  randomSerial,
  signCertificate,
  wholeSeconds,
  type KeySize,
  type NameFields,
} from './x509.ts';

/** What POST /api/mtls/ca asks for, defaults applied. */
export interface CaRequest {
  common_name: string;
  organization: string;
  country: string | null;
  validity_days: number;
  key_size: KeySize;
}

/** CA metadata as config.yaml stores it and MtlsConfig shows it. */
export interface CaMetadata {
  subject: string;
  serial: string;
  key_size: number;
  not_before: string;
  expiry: string;
  fingerprint_sha256: string;
}

/** The CA in memory: PEMs, the parsed certificate (forge for signing, Node's for verifying) and its name. */
export interface LoadedCa {
  certPem: string;
  keyPem: string;
  forgeCert: Forge.pki.Certificate;
  x509: X509Certificate;
  name: NameFields;
  metadata: CaMetadata;
}

/** Creates a self-signed CA: CA:true pathlen 0, keyCertSign + cRLSign, SHA-256. */
export async function createCa(request: CaRequest, now: Date): Promise<LoadedCa> {
  const keys = await generateRsaKeyPair(request.key_size);
  const name: NameFields = {
    commonName: request.common_name,
    organization: request.organization,
    country: request.country,
  };
  const notBefore = wholeSeconds(now);
  const certPem = signCertificate(
    {
      subject: nameAttributes(name),
      publicKeyPem: keys.publicKey,
      serial: randomSerial(),
      notBefore,
      notAfter: new Date(notBefore.getTime() + request.validity_days * DAY_MS),
      extensions: [
        { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
        { name: 'subjectKeyIdentifier' },
      ],
    },
    { certificate: null, privateKeyPem: keys.privateKey },
  );
  return loadCa(certPem, keys.privateKey);
}

/** Parses a stored CA; throws when the files do not hold a CA certificate and its matching key. */
export function loadCa(certPem: string, keyPem: string): LoadedCa {
  const x509 = new X509Certificate(certPem);
  if (!x509.ca) throw new Error('ca.crt is not a CA certificate');
  const publicFromKey = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
  if (!publicFromKey.equals(x509.publicKey.export({ type: 'spki', format: 'der' })))
    throw new Error('ca.key does not belong to ca.crt');
  const forgeCert = forge.pki.certificateFromPem(certPem);
  decodeUtf8Values(forgeCert.subject.attributes);
  const name = nameOf(forgeCert);
  return {
    certPem,
    keyPem,
    forgeCert,
    x509,
    name,
    metadata: {
      subject: formatName(name),
      serial: forgeCert.serialNumber.toLowerCase(),
      key_size: (forgeCert.publicKey as Forge.pki.rsa.PublicKey).n.bitLength(),
      not_before: forgeCert.validity.notBefore.toISOString(),
      expiry: forgeCert.validity.notAfter.toISOString(),
      fingerprint_sha256: fingerprintSha256(pemToDer(certPem)),
    },
  };
}

/**
 * forge parses UTF8String values as raw UTF-8 bytes but encodes them from JS strings: decoded in
 * place, the subject re-encodes to the same bytes as the CA's issuer name in client certificates
 * and in the CRL.
 */
function decodeUtf8Values(attributes: Forge.pki.CertificateField[]): void {
  for (const attr of attributes as Array<{ value: string; valueTagClass?: number }>) {
    if (attr.valueTagClass === forge.asn1.Type.UTF8) attr.value = forge.util.decodeUtf8(attr.value);
  }
}

/** CN, O and C of a certificate's subject. */
function nameOf(cert: Forge.pki.Certificate): NameFields {
  const field = (shortName: string): string | null =>
    (cert.subject.getField(shortName) as { value: string } | null)?.value ?? null;
  return { commonName: field('CN') ?? '', organization: field('O') ?? '', country: field('C') };
}
