/**
 * The non-YAML files of the mTLS group under the data dir (API.md §3.1): the CA certificate and
 * key, the CRL, and each client's certificate, key and PKCS#12. Written atomically through the
 * store (temp file, fsync, rename); keys and bundles 0600, the `mtls` dirs 0700. The store's
 * watcher reads only `.yaml`/`.yml` files, so these never count as hand edits.
 */
import { readFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import { removeDurably } from '../../core/store/atomic-write.ts';
import type { YamlStore } from '../../core/store/types.ts';

const DIR_MODE = 0o700;
const SECRET = 0o600;
const PUBLIC = 0o644;

export type ClientFileKind = 'crt' | 'key' | 'p12';

export class MtlsFiles {
  constructor(private readonly store: YamlStore) {}

  readonly caCert = 'mtls/ca.crt';
  readonly caKey = 'mtls/ca.key';
  readonly crl = 'mtls/crl.pem';

  client(id: string, kind: ClientFileKind): string {
    return `mtls/clients/${id}.${kind}`;
  }

  /** `mtls/` and `mtls/clients/` are 0700 (API.md §3.4), also when an older or hand-made dir was wider. */
  async secureDirs(): Promise<void> {
    for (const dir of ['mtls', 'mtls/clients']) await chmod(path.join(this.store.dataDir, dir), DIR_MODE);
  }

  async writeCa(certPem: string, keyPem: string): Promise<void> {
    // the key first: a certificate on disk always has its key beside it
    await this.store.writeRaw(this.caKey, keyPem, SECRET, DIR_MODE);
    await this.store.writeRaw(this.caCert, certPem, PUBLIC, DIR_MODE);
  }

  async writeCrl(pem: string): Promise<void> {
    await this.store.writeRaw(this.crl, pem, PUBLIC, DIR_MODE);
  }

  async writeClient(id: string, files: { crt: string; key: string; p12: Buffer }): Promise<void> {
    await this.store.writeRaw(this.client(id, 'key'), files.key, SECRET, DIR_MODE);
    await this.store.writeRaw(this.client(id, 'p12'), files.p12, SECRET, DIR_MODE);
    await this.store.writeRaw(this.client(id, 'crt'), files.crt, PUBLIC, DIR_MODE);
  }

  async read(relative: string): Promise<Buffer | undefined> {
    return this.store.readRaw(relative);
  }

  async readText(relative: string): Promise<string | undefined> {
    return (await this.store.readRaw(relative))?.toString('utf8');
  }

  /** A small file read at once (the CA, inside a store change listener); undefined when missing. */
  readTextSync(relative: string): string | undefined {
    try {
      return readFileSync(path.join(this.store.dataDir, relative), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Removes files; missing ones are fine. */
  async remove(...relative: string[]): Promise<void> {
    for (const file of relative) await removeDurably(path.join(this.store.dataDir, file));
  }

  async removeClient(id: string): Promise<void> {
    await this.remove(this.client(id, 'p12'), this.client(id, 'key'), this.client(id, 'crt'));
  }
}
