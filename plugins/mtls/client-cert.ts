/**
 * Issuing a client certificate under our CA (API.md §4.8): CN = client name, O and C from the CA,
 * digitalSignature + keyEncipherment, extKeyUsage clientAuth; validity capped at the CA's expiry.
 */
import type { LoadedCa } from './ca.ts';
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

export interface IssuedClient {
  certPem: string;
  keyPem: string;
  subject: string;
  serial: string;
  fingerprint_sha256: string;
  not_before: string;
  expiry: string;
  /** The requested validity went past the CA's expiry and was cut to it. */
  capped: boolean;
}

/** Generates a key pair and signs a client certificate for `name`. */
export async function issueClientCertificate(
  ca: LoadedCa,
  name: string,
  validityDays: number,
  keySize: KeySize,
  now: Date,
): Promise<IssuedClient> {
  const keys = await generateRsaKeyPair(keySize);
  const fields: NameFields = { commonName: name, organization: ca.name.organization, country: ca.name.country };
  const notBefore = wholeSeconds(now);
  const caExpiry = ca.forgeCert.validity.notAfter;
  const wanted = new Date(notBefore.getTime() + validityDays * DAY_MS);
  const capped = wanted.getTime() > caExpiry.getTime();
  const notAfter = capped ? caExpiry : wanted;
  const serial = randomSerial();
  const certPem = signCertificate(
    {
      subject: nameAttributes(fields),
      publicKeyPem: keys.publicKey,
      serial,
      notBefore,
      notAfter,
      extensions: [
        { name: 'basicConstraints', cA: false, critical: true },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', clientAuth: true },
        { name: 'subjectKeyIdentifier' },
        { name: 'authorityKeyIdentifier', keyIdentifier: ca.forgeCert.generateSubjectKeyIdentifier().getBytes() },
      ],
    },
    { certificate: ca.forgeCert, privateKeyPem: ca.keyPem },
  );
  return {
    certPem,
    keyPem: keys.privateKey,
    subject: formatName(fields),
    serial,
    fingerprint_sha256: fingerprintSha256(pemToDer(certPem)),
    not_before: notBefore.toISOString(),
    expiry: notAfter.toISOString(),
    capped,
  };
}

/** Whether a stored certificate's expiry equals the CA's (its validity was capped, or ends with the CA). */
export const endsWithCa = (expiry: string, ca: LoadedCa | null): boolean =>
  ca !== null && Date.parse(expiry) === ca.forgeCert.validity.notAfter.getTime();
