/**
 * Client certificates (API.md §4.8): issue, list, read, download, revoke, delete. Metadata lives in
 * `data/mtls/clients/<id>.yaml` (a store collection); the certificate, key and PKCS#12 beside it.
 */
import { errors, type ErrorDetail, type AppError } from '../../core/errors/app-error.ts';
import type { Collection, StoredObject } from '../../core/store/types.ts';
import { checkName, uniqueSlug } from '../../model/ids.ts';
import { endsWithCa, issueClientCertificate } from './client-cert.ts';
import { mtlsErrors } from './errors.ts';
import type { MtlsFiles } from './files.ts';
import { buildP12 } from './p12.ts';
import type { ClientData, ClientInput, ClientView } from './schemas.ts';
import type { MtlsService } from './service.ts';
import { ifMatchAccepts, matchingVersion } from '../../model/http.ts';

export class ClientService {
  constructor(
    private readonly clients: Collection<ClientData>,
    private readonly mtls: MtlsService,
    private readonly files: MtlsFiles,
    private readonly now: () => Date,
  ) {}

  /** Newest first (then by id). */
  list(): ClientView[] {
    return [...this.clients.list()]
      .sort((a, b) => (a.created_at > b.created_at ? -1 : a.created_at < b.created_at ? 1 : a.id < b.id ? -1 : 1))
      .map((c) => this.view(c));
  }

  get(id: string): ClientView | undefined {
    const stored = this.clients.get(id);
    return stored ? this.view(stored) : undefined;
  }

  /** The certificate PEM of a client (GET /clients/:id). */
  async certificate(id: string): Promise<string> {
    return (await this.files.readText(this.files.client(id, 'crt'))) ?? '';
  }

  /** Issues the certificate and its PKCS#12; the password encrypts the bundle and is never stored. */
  async create(body: ClientInput): Promise<ClientView> {
    const name = checkName(body.name);
    return this.mtls.queue.run(async () => {
      const ca = this.mtls.currentCa();
      if (!ca) throw mtlsErrors.noCa('issuing client certificates');
      const id = body.id ?? uniqueSlug(name, 'client', (c) => this.clients.has(c));
      if (body.id !== undefined && this.clients.has(id)) throw mtlsErrors.idTaken(id);
      const owner = this.clients.list().find((c) => c.data.name.trim().toLowerCase() === name.toLowerCase());
      if (owner) throw mtlsErrors.nameTaken(name, owner.id);
      const keySize = body.key_size ?? 4096;
      const legacy = body.legacy_p12 ?? false;
      const issued = await issueClientCertificate(ca, name, body.validity_days ?? 730, keySize, this.now());
      const p12 = buildP12({
        keyPem: issued.keyPem,
        certPem: issued.certPem,
        caPem: ca.certPem,
        password: body.p12_password,
        legacy,
        friendlyName: name,
      });
      await this.files.writeClient(id, { crt: issued.certPem, key: issued.keyPem, p12 });
      try {
        const stored = await this.clients.create(id, {
          name,
          subject: issued.subject,
          serial: issued.serial,
          fingerprint_sha256: issued.fingerprint_sha256,
          not_before: issued.not_before,
          expiry: issued.expiry,
          revoked: false,
          revoked_at: null,
          legacy_p12: legacy,
          key_size: keySize,
        });
        return this.view(stored);
      } catch (err) {
        await this.files.removeClient(id);
        throw err;
      }
    });
  }

  /** The stored PKCS#12; 409 once revoked. */
  async download(id: string): Promise<Buffer> {
    const stored = this.clients.get(id);
    if (!stored) throw mtlsErrors.clientNotFound(id);
    if (stored.data.revoked) throw mtlsErrors.revokedDownload(id);
    const bundle = await this.files.read(this.files.client(id, 'p12'));
    if (!bundle) throw mtlsErrors.bundleMissing(id);
    return bundle;
  }

  /** Revokes and re-signs the CRL; revoking again changes nothing. */
  async revoke(id: string, ifMatch?: string): Promise<ClientView> {
    return this.mtls.queue.run(async () => {
      const current = this.existing(id, ifMatch);
      if (current.data.revoked) return this.view(current);
      const updated = await this.clients.update(
        id,
        (fresh) => {
          if (!fresh) throw mtlsErrors.clientNotFound(id);
          return { ...fresh.data, revoked: true, revoked_at: this.now().toISOString() };
        },
        { expect: matchingVersion(ifMatch) },
      );
      await this.mtls.revocation.sign();
      return this.view(updated!);
    });
  }

  /** Deletes a client: its serial goes into the CRL first (until it expires), then the files go. */
  async remove(id: string, ifMatch?: string): Promise<void> {
    await this.mtls.queue.run(async () => {
      const current = this.existing(id, ifMatch);
      await this.mtls.revocation.sign([this.mtls.revocation.retiredEntry(current.data, this.now())]);
      await this.clients.delete(id, { expect: matchingVersion(ifMatch) });
      await this.files.removeClient(id);
    });
  }

  /**
   * A client file deleted by hand is handled as the API would handle it: its serial is retired
   * into the CRL and its certificate, key and bundle are removed. A revocation edited by hand
   * re-signs the CRL.
   */
  async handEdited(
    previous: StoredObject<ClientData> | undefined,
    current: StoredObject<ClientData> | undefined,
  ): Promise<void> {
    await this.mtls.queue.run(async () => {
      // a restore reports client files before config.yaml: sign with the CA files on disk now
      this.mtls.reloadCa();
      if (previous && !current) {
        await this.mtls.revocation.sign([this.mtls.revocation.retiredEntry(previous.data, this.now())]);
        await this.files.removeClient(previous.id);
      } else if (current && previous?.data.revoked !== current.data.revoked) {
        await this.mtls.revocation.sign();
      }
    });
  }

  /** Hand-edit check of a client file: the name rules of the API. */
  checkFile(data: ClientData): ErrorDetail[] {
    try {
      checkName(data.name);
      return [];
    } catch (err) {
      return (err as AppError).details ?? [];
    }
  }

  private existing(id: string, ifMatch: string | undefined): StoredObject<ClientData> {
    const current = this.clients.get(id);
    if (!current) throw mtlsErrors.clientNotFound(id);
    if (!ifMatchAccepts(ifMatch, current.etag)) throw errors.preconditionFailed();
    return current;
  }

  private view(stored: StoredObject<ClientData>): ClientView {
    const { data } = stored;
    const warnings: string[] = [];
    if (endsWithCa(data.expiry, this.mtls.currentCa()))
      warnings.push(`validity ends with the CA's expiry (${data.expiry})`);
    if (Date.parse(data.expiry) <= this.now().getTime()) warnings.push(`certificate expired at ${data.expiry}`);
    return {
      id: stored.id,
      name: data.name,
      subject: data.subject,
      serial: data.serial,
      fingerprint_sha256: data.fingerprint_sha256,
      not_before: data.not_before,
      expiry: data.expiry,
      revoked: data.revoked,
      revoked_at: data.revoked_at,
      legacy_p12: data.legacy_p12,
      warnings,
      created_at: stored.created_at,
      updated_at: stored.updated_at,
      etag: stored.etag,
    };
  }
}
