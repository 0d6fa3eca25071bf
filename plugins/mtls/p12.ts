/**
 * PKCS#12 bundles for client certificates (API.md §4.8): key, certificate and CA certificate,
 * encrypted with the password the caller chose. AES-256 by default; 3DES for older Apple and
 * Windows clients that cannot read PBES2.
 */
import { forge } from './forge.ts';

export interface P12Parts {
  keyPem: string;
  certPem: string;
  caPem: string;
  password: string;
  legacy: boolean;
  /** Shown by key stores as the entry's name. */
  friendlyName: string;
}

/** The DER bytes of the PKCS#12 file. */
export function buildP12(parts: P12Parts): Buffer {
  const key = forge.pki.privateKeyFromPem(parts.keyPem);
  const chain = [forge.pki.certificateFromPem(parts.certPem), forge.pki.certificateFromPem(parts.caPem)];
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, chain, parts.password, {
    algorithm: parts.legacy ? '3des' : 'aes256',
    friendlyName: parts.friendlyName,
    generateLocalKeyId: true,
  });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}
