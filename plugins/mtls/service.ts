/**
 * mTLS domain logic (API.md §4.8): the CA's life cycle, the global switch, the mtlswhitelist
 * settings, the CRL and what the config generator needs (MtlsState, G6–G8). Client certificates
 * are in clients.ts. All writes run one after another on one queue.
 */
import { errors } from '../../core/errors/app-error.ts';
import { hashOf } from '../../core/store/atomic-write.ts';
import type { Collection, StoreDocument } from '../../core/store/types.ts';
import type { StaticConfigReader } from '../../model/static-config.ts';
import type { MiddlewareConfig, MtlsState } from '../../model/types.ts';
import { checkName } from '../../model/ids.ts';
import { createCa, loadCa, type LoadedCa } from './ca.ts';
import { crlToDer } from './crl.ts';
import { mtlsErrors } from './errors.ts';
import type { MtlsFiles } from './files.ts';
import { middlewareConfigFromBody, middlewareConfigOf } from './middleware-config.ts';
import { checkPlugin, generatorPlugin, type PluginCheck } from './plugin-check.ts';
import { SerialQueue } from './queue.ts';
import { Revocation } from './revocation.ts';
import type { CaInput, ClientData, ConfigFileData, MiddlewareConfigInput, MtlsConfigView } from './schemas.ts';
import { revokedSerialIn } from './verify.ts';
import { ifMatchAccepts } from '../../model/http.ts';

export interface MtlsServiceOptions {
  config: StoreDocument<ConfigFileData>;
  clients: Collection<ClientData>;
  files: MtlsFiles;
  staticConfig: StaticConfigReader;
  now: () => Date;
  settings: { verify_url: string; proxy_ca_path: string; crl_validity_days: number };
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class MtlsService {
  readonly queue = new SerialQueue();
  readonly revocation: Revocation;
  private ca: LoadedCa | null = null;
  private readonly loadedAt: string;

  constructor(private readonly options: MtlsServiceOptions) {
    this.loadedAt = options.now().toISOString();
    this.revocation = new Revocation({
      config: options.config,
      clients: options.clients,
      files: options.files,
      ca: () => this.ca,
      now: options.now,
      validityDays: options.settings.crl_validity_days,
      serial: (work) => this.queue.run(work),
      onError: (err) => options.log.error({ err }, 'mTLS: re-signing the CRL failed'),
    });
  }

  /** Startup: the CA from disk, config.yaml written once, a CRL if there is none. */
  async open(): Promise<void> {
    this.reloadCa();
    if (!this.options.config.exists()) {
      const now = this.options.now().toISOString();
      await this.options.config.update((current) => ({ enabled: false, ...current, created_at: now, updated_at: now }));
    }
    const crlMissing = this.ca !== null && (await this.options.files.read(this.options.files.crl)) === undefined;
    if (crlMissing || (this.ca && !this.options.config.get().crl?.next_update))
      await this.queue.run(() => this.revocation.sign());
    else this.revocation.arm();
  }

  /**
   * Takes the CA files as they are on disk (startup, or config.yaml changed by hand or by a
   * restore). Synchronous, so a config.yaml change listener has the new CA in place before the
   * store's change event makes the provider regenerate.
   */
  reloadCa(): void {
    const cert = this.options.files.readTextSync(this.options.files.caCert);
    const key = this.options.files.readTextSync(this.options.files.caKey);
    this.ca = null;
    if (cert !== undefined && key !== undefined) {
      try {
        this.ca = loadCa(cert, key);
      } catch (err) {
        this.options.log.error(
          { err: { message: (err as Error).message } },
          'mTLS: the stored CA cannot be used; mTLS stays off until a CA is created',
        );
      }
    } else if (cert !== undefined || key !== undefined) {
      this.options.log.error({}, 'mTLS: ca.crt and ca.key must both exist; mTLS stays off until a CA is created');
    }
    this.revocation.invalidate();
    this.revocation.arm();
  }

  currentCa(): LoadedCa | null {
    return this.ca;
  }

  hasCa(): boolean {
    return this.ca !== null;
  }

  /** Globally enabled and usable (a CA exists). */
  enabled(): boolean {
    return this.ca !== null && this.options.config.get().enabled === true;
  }

  generatorState(): MtlsState {
    return {
      enabled: this.enabled(),
      ca_pem: this.ca?.certPem ?? null,
      plugin: generatorPlugin(this.options.staticConfig.declaredPlugins()),
      middleware: this.middlewareConfig(),
      verify_url: this.options.settings.verify_url,
      proxy_ca_path: this.options.settings.proxy_ca_path || null,
    };
  }

  view(): MtlsConfigView {
    const stored = this.options.config.get();
    const ca = this.ca?.metadata;
    const clients = this.options.clients.list();
    return {
      enabled: this.enabled(),
      has_ca: ca !== undefined,
      ca_subject: ca?.subject ?? null,
      ca_serial: ca?.serial ?? null,
      ca_key_size: ca?.key_size ?? null,
      ca_not_before: ca?.not_before ?? null,
      ca_expiry: ca?.expiry ?? null,
      ca_fingerprint_sha256: ca?.fingerprint_sha256 ?? null,
      client_count: clients.length,
      revoked_count: clients.filter((c) => c.data.revoked).length,
      crl_next_update: ca ? (stored.crl?.next_update ?? null) : null,
      created_at: stored.created_at ?? this.loadedAt,
      updated_at: stored.updated_at ?? this.loadedAt,
      etag: this.etag(),
    };
  }

  /** ETag of config.yaml (the hash of no bytes before it is first written). */
  etag(): string {
    return this.options.config.etag() || hashOf('');
  }

  async setEnabled(enabled: boolean, ifMatch?: string): Promise<MtlsConfigView> {
    return this.queue.run(async () => {
      this.assertIfMatch(ifMatch);
      if (enabled && !this.ca) throw mtlsErrors.noCa('enabling mTLS');
      await this.write({ enabled });
      return this.view();
    });
  }

  /** POST /api/mtls/ca: a new CA; with `force` it replaces the old one and deletes every client. */
  async createCa(body: CaInput, force: boolean, ifMatch?: string): Promise<MtlsConfigView> {
    const common_name = checkName(body.common_name, '/common_name');
    const organization = (body.organization ?? '').trim() === '' ? '' : checkName(body.organization!, '/organization');
    return this.queue.run(async () => {
      this.assertIfMatch(ifMatch);
      if (this.ca && !force) throw mtlsErrors.caExists();
      const ca = await createCa(
        {
          common_name,
          organization,
          country: body.country ?? null,
          validity_days: body.validity_days ?? 1825,
          key_size: body.key_size ?? 4096,
        },
        this.options.now(),
      );
      await this.deleteAllClients();
      await this.options.files.writeCa(ca.certPem, ca.keyPem);
      this.ca = ca;
      await this.write({ ca: ca.metadata, crl: { number: 0, this_update: null, next_update: null, retired: [] } });
      await this.revocation.sign();
      this.options.log.info(
        { subject: ca.metadata.subject, serial: ca.metadata.serial, replaced: force },
        'mTLS CA created',
      );
      return this.view();
    });
  }

  /** DELETE /api/mtls/ca: disables mTLS and removes CA and CRL; clients block it unless `force`. */
  async deleteCa(force: boolean, ifMatch?: string): Promise<void> {
    await this.queue.run(async () => {
      if (!this.ca) throw mtlsErrors.caNotFound();
      this.assertIfMatch(ifMatch);
      const clients = this.options.clients.list().map((c) => c.id);
      if (clients.length > 0 && !force) throw mtlsErrors.caInUse(clients);
      await this.deleteAllClients();
      this.ca = null;
      this.revocation.disarm();
      await this.options.files.remove(this.options.files.crl, this.options.files.caCert, this.options.files.caKey);
      await this.write({
        enabled: false,
        ca: null,
        crl: { number: 0, this_update: null, next_update: null, retired: [] },
      });
      this.options.log.info({ clients_deleted: clients.length }, 'mTLS CA deleted');
    });
  }

  middlewareConfig(): MiddlewareConfig {
    return middlewareConfigOf(this.options.config.get().middleware);
  }

  async replaceMiddlewareConfig(body: MiddlewareConfigInput, ifMatch?: string): Promise<MiddlewareConfig> {
    const middleware = middlewareConfigFromBody(body);
    return this.queue.run(async () => {
      this.assertIfMatch(ifMatch);
      await this.write({ middleware: middleware as ConfigFileData['middleware'] });
      return this.middlewareConfig();
    });
  }

  pluginCheck(): PluginCheck {
    return checkPlugin(this.options.staticConfig.declaredPlugins());
  }

  /** The current CRL (signed anew if its file went missing); null without a CA. */
  async crl(format: 'pem' | 'der'): Promise<Buffer | null> {
    if (!this.ca) return null;
    let pem = await this.options.files.readText(this.options.files.crl);
    if (pem === undefined) {
      await this.queue.run(() => this.revocation.sign());
      pem = await this.options.files.readText(this.options.files.crl);
      if (pem === undefined) return null;
    }
    return format === 'der' ? crlToDer(pem) : Buffer.from(pem);
  }

  /** The revoked serial presented in an X-Forwarded-Tls-Client-Cert header, or null. */
  revokedSerial(header: string | string[] | undefined): string | null {
    return revokedSerialIn(header, this.ca?.x509 ?? null, this.revocation.serials());
  }

  private async deleteAllClients(): Promise<void> {
    for (const client of this.options.clients.list()) {
      await this.options.clients.delete(client.id);
      await this.options.files.removeClient(client.id);
    }
  }

  private async write(fields: Partial<ConfigFileData>): Promise<void> {
    const now = this.options.now().toISOString();
    await this.options.config.update((current) => ({
      ...current,
      ...fields,
      created_at: current.created_at ?? now,
      updated_at: now,
    }));
  }

  private assertIfMatch(ifMatch: string | undefined): void {
    if (!ifMatchAccepts(ifMatch, this.etag())) throw errors.preconditionFailed();
  }
}
