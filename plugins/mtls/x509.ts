/**
 * Certificate building blocks of the mTLS group (API.md §4.8): RSA keys from Node's native
 * generator (forge's JS keygen takes seconds at 4096 bits), random serials, names, and the
 * signing of a certificate with node-forge.
 */
import { createHash, generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type Forge from 'node-forge';
import { forge } from './forge.ts';

const generateRsa = promisify(generateKeyPair);

/** Validity periods are given in days. */
export const DAY_MS = 86_400_000;

export const KEY_SIZES = [2048, 3072, 4096] as const;
export type KeySize = (typeof KEY_SIZES)[number];

/** A key pair as PEM: SPKI public key, unencrypted PKCS#8 private key. */
export interface KeyPairPem {
  publicKey: string;
  privateKey: string;
}

/** A new RSA key pair (e = 65537). */
export async function generateRsaKeyPair(bits: KeySize): Promise<KeyPairPem> {
  return generateRsa('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

/** A random positive 128-bit serial as 32 lower-case hex digits (first byte 01–7f: positive, minimal DER). */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0] & 0x7f || 0x01;
  return bytes.toString('hex');
}

/** A serial in the form the API and the revocation check compare: lower-case hex, no leading zeros. */
export function normalizeSerial(hex: string): string {
  return hex.toLowerCase().replace(/^0+(?=.)/, '');
}

/** Subject fields of our certificates, in the order they are written (C, O, CN). */
export interface NameFields {
  commonName: string;
  organization: string;
  country: string | null;
}

/** forge attributes of a name; CN and O as UTF8String so any name survives. */
export function nameAttributes(fields: NameFields): Forge.pki.CertificateField[] {
  const attrs: Forge.pki.CertificateField[] = [];
  if (fields.country) attrs.push({ shortName: 'C', value: fields.country });
  if (fields.organization)
    attrs.push({ shortName: 'O', value: fields.organization, valueTagClass: forge.asn1.Type.UTF8 as never });
  attrs.push({ shortName: 'CN', value: fields.commonName, valueTagClass: forge.asn1.Type.UTF8 as never });
  return attrs;
}

/** The name as one string in RFC 4514 form (most specific first): `CN=Laptop,O=Acme,C=DE`. */
export function formatName(fields: NameFields): string {
  const parts = [`CN=${escapeRdn(fields.commonName)}`];
  if (fields.organization) parts.push(`O=${escapeRdn(fields.organization)}`);
  if (fields.country) parts.push(`C=${escapeRdn(fields.country)}`);
  return parts.join(',');
}

function escapeRdn(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ');
}

/** What to sign: subject, key, validity and extensions; the issuer is the signer's subject. */
export interface CertificateRequest {
  subject: Forge.pki.CertificateField[];
  publicKeyPem: string;
  serial: string;
  notBefore: Date;
  notAfter: Date;
  extensions: object[];
}

/** The signing side: its certificate (null when self-signing) and its private key. */
export interface Signer {
  certificate: Forge.pki.Certificate | null;
  privateKeyPem: string;
}

/** Signs a certificate with SHA-256 and returns it as PEM. */
export function signCertificate(request: CertificateRequest, signer: Signer): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(request.publicKeyPem);
  cert.serialNumber = request.serial;
  cert.validity.notBefore = request.notBefore;
  cert.validity.notAfter = request.notAfter;
  cert.setSubject(request.subject);
  cert.setIssuer(signer.certificate ? signer.certificate.subject.attributes : request.subject);
  cert.setExtensions(request.extensions);
  cert.sign(forge.pki.privateKeyFromPem(signer.privateKeyPem) as Forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** DER bytes of the first PEM block of a text. */
export function pemToDer(pem: string): Buffer {
  const body = pem.replace(/-----(BEGIN|END)[^-]*-----/g, '').replace(/\s+/g, '');
  return Buffer.from(body, 'base64');
}

/** SHA-256 fingerprint of DER bytes, as 64 lower-case hex digits. */
export function fingerprintSha256(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex');
}

/** X.509 time with millisecond precision dropped (certificates hold whole seconds). */
export function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}
