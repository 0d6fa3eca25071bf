/**
 * Which registry digest was last told as an image update, per service, kept in the data file
 * `container/image-update-notices.yaml` so that neither a restart, a hot reload nor a new cluster
 * leader tells the same update again: it is written through the store, so in cluster mode it is
 * replicated through etcd like any data file, and the leader re-reads it before each round of
 * notices (the certificate notices do the same: metrics/cert-notices.ts). A digest has no order, so
 * each entry carries when it was recorded and, per service, the later record wins; a service found
 * up to date again is kept as `latest_digest: null` so that this also reaches a node holding the
 * older digest.
 */
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { YamlStore } from '../../core/store/types.ts';

/** The record, relative to the data dir (a YAML file in its group's directory, API.md §3): replicated in cluster mode. */
export const IMAGE_UPDATE_NOTICES_FILE = path.join('container', 'image-update-notices.yaml');
/** Where versions before the cluster fix kept it (one node's cache): still read at start, so an upgrade tells nothing again. */
export const LEGACY_IMAGE_UPDATE_NOTICES_FILE = path.join('.cache', 'image-update-notices.json');

/** What the record needs of the store. */
export type NoticeStore = Pick<YamlStore, 'readRaw' | 'writeRaw'>;

interface Told {
  /** null: found up to date again (a later new digest is news) */
  digest: string | null;
  /** ms since the epoch; 0 when the file did not say (the legacy cache file) */
  at: number;
}

export class ImageUpdateNotices {
  /** service → the latest digest told, or null once up to date again */
  private told = new Map<string, Told>();
  /** saves run one after another: the last one written is the newest record */
  private saving: Promise<void> = Promise.resolve();

  /** `store` null keeps the record in memory only. */
  constructor(
    private readonly store: NoticeStore | null,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Loads what earlier runs told (also the legacy cache file); a missing or unreadable file is an empty record. */
  async load(): Promise<void> {
    await this.merge(LEGACY_IMAGE_UPDATE_NOTICES_FILE);
    await this.reload();
  }

  /**
   * Takes in the record as the data file has it now (another node's, when it led last), keeping what
   * this node holds: per service, the later record wins (this node's on a tie).
   */
  async reload(): Promise<void> {
    await this.merge(IMAGE_UPDATE_NOTICES_FILE);
  }

  /** Records `digest` as told for `service` (null: up to date again, a later new digest is news). True when changed. */
  set(service: string, digest: string | null): boolean {
    if ((this.told.get(service)?.digest ?? null) === digest) return false;
    this.told.set(service, { digest, at: this.now().getTime() });
    return true;
  }

  /** Writes the record atomically, through the store (replicated first in cluster mode), after any save in progress. */
  save(): Promise<void> {
    const notices = [...this.told].map(([service, told]) => ({
      service,
      latest_digest: told.digest,
      recorded_at: new Date(told.at).toISOString(),
    }));
    const content = stringify({ format: 1, notices });
    const store = this.store;
    const next = this.saving.then(() => store?.writeRaw(IMAGE_UPDATE_NOTICES_FILE, content, 0o600));
    this.saving = next.catch(() => undefined);
    return next;
  }

  private async merge(relative: string): Promise<void> {
    if (!this.store) return;
    let saved: { notices?: unknown } | null;
    try {
      const bytes = await this.store.readRaw(relative);
      if (!bytes) return;
      // YAML (JSON is YAML too: the legacy cache file reads the same way)
      saved = parse(bytes.toString('utf8')) as { notices?: unknown } | null;
    } catch {
      return;
    }
    const entries = Array.isArray(saved?.notices) ? saved.notices : [];
    for (const entry of entries as Array<{
      service?: unknown;
      latest_digest?: unknown;
      recorded_at?: unknown;
    } | null>) {
      if (typeof entry?.service !== 'string') continue;
      if (typeof entry.latest_digest !== 'string' && entry.latest_digest !== null) continue;
      const at = typeof entry.recorded_at === 'string' ? Date.parse(entry.recorded_at) || 0 : 0;
      const held = this.told.get(entry.service);
      if (held && held.at >= at) continue;
      this.told.set(entry.service, { digest: entry.latest_digest, at });
    }
  }
}
