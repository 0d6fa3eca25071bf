/**
 * The certificate revocation list (API.md §4.8): an X.509 v2 CRL (RFC 5280 §5) with a CRL number
 * and the CA's key identifier, signed SHA-256 with RSA. node-forge encodes ASN.1 but cannot build
 * CRLs, so the structure is assembled here and signed with Node's crypto.
 */
import { sign } from 'node:crypto';
import type Forge from 'node-forge';
import { forge } from './forge.ts';
import type { LoadedCa } from './ca.ts';

const { asn1 } = forge;
const OID_CRL_NUMBER = '2.5.29.20';
const OID_AUTHORITY_KEY_IDENTIFIER = forge.pki.oids.authorityKeyIdentifier;
const OID_SHA256_WITH_RSA = forge.pki.oids.sha256WithRSAEncryption;

/** One revoked certificate. */
export interface CrlEntry {
  /** hex */
  serial: string;
  revoked_at: string;
}

export interface CrlRequest {
  number: number;
  thisUpdate: Date;
  nextUpdate: Date;
  entries: CrlEntry[];
}

/** The signed CRL as PEM (`-----BEGIN X509 CRL-----`). */
export function buildCrl(ca: LoadedCa, request: CrlRequest): string {
  const tbs = tbsCertList(ca, request);
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  const signature = sign('sha256', tbsDer, ca.keyPem);
  const crl = sequence([
    tbs,
    signatureAlgorithm(),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\u0000${signature.toString('binary')}`),
  ]);
  const der = asn1.toDer(crl).getBytes();
  return forge.pem.encode({ type: 'X509 CRL', body: der }).replace(/\r\n/g, '\n');
}

/** DER bytes of a CRL PEM. */
export function crlToDer(pem: string): Buffer {
  return Buffer.from(forge.pem.decode(pem)[0].body, 'binary');
}

function tbsCertList(ca: LoadedCa, request: CrlRequest): Forge.asn1.Asn1 {
  const issuer = forge.pki.distinguishedNameToAsn1(ca.forgeCert.subject);
  const fields: Forge.asn1.Asn1[] = [
    integer('01'), // v2
    signatureAlgorithm(),
    issuer,
    time(request.thisUpdate),
    time(request.nextUpdate),
  ];
  // an empty revokedCertificates must be omitted, not written as an empty SEQUENCE
  if (request.entries.length > 0) {
    fields.push(
      sequence(request.entries.map((entry) => sequence([integer(entry.serial), time(new Date(entry.revoked_at))]))),
    );
  }
  const keyId = ca.forgeCert.generateSubjectKeyIdentifier().getBytes();
  const extensions = sequence([
    extension(OID_AUTHORITY_KEY_IDENTIFIER, sequence([asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, keyId)])),
    extension(OID_CRL_NUMBER, integer(request.number.toString(16))),
  ]);
  fields.push(asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [extensions]));
  return sequence(fields);
}

const sequence = (items: Forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, items);

function signatureAlgorithm(): Forge.asn1.Asn1 {
  return sequence([
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(OID_SHA256_WITH_RSA).getBytes()),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''),
  ]);
}

function extension(oid: string, value: Forge.asn1.Asn1): Forge.asn1.Asn1 {
  return sequence([
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(oid).getBytes()),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, asn1.toDer(value).getBytes()),
  ]);
}

/** A non-negative INTEGER from hex digits, in minimal DER form. */
function integer(hex: string): Forge.asn1.Asn1 {
  let digits = hex.toLowerCase().replace(/^0+/, '') || '0';
  if (digits.length % 2 === 1) digits = `0${digits}`;
  if (parseInt(digits.slice(0, 2), 16) >= 0x80) digits = `00${digits}`;
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, forge.util.hexToBytes(digits));
}

/** RFC 5280 §5.1.2.4: UTCTime through 2049, GeneralizedTime from 2050. */
function time(date: Date): Forge.asn1.Asn1 {
  return date.getUTCFullYear() < 2050
    ? asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTCTIME, false, asn1.dateToUtcTime(date))
    : asn1.create(asn1.Class.UNIVERSAL, asn1.Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(date));
}

/**
 * Re-signs the CRL a fixed time after its last signing (daily, API.md §4.8), so it never reaches
 * its nextUpdate while the server runs. The timer is unref'd and cleared by close().
 */
export class CrlSchedule {
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly resign: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** (Re)arms the timer: due `intervalMs` after `signedAt`, at once when that has passed; null disarms it. */
  arm(signedAt: Date | null, now: Date): void {
    this.disarm();
    if (this.closed || signedAt === null) return;
    const delay = Math.max(0, signedAt.getTime() + this.intervalMs - now.getTime());
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.resign().catch(this.onError);
      },
      Math.min(delay, 2 ** 31 - 1),
    );
    this.timer.unref();
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  close(): void {
    this.closed = true;
    this.disarm();
  }
}
