/**
 * The Plugins group's logic (API.md §4.6): lists the plugins of Traefik's static config with their
 * status and users, installs and removes entries (serialised edits), answers the catalogue.
 */
import { isScalar } from 'yaml';
import type { StaticConfigReader } from '../../model/static-config.ts';
import type { ProxyExplorer } from '../proxy/index.ts';
import type { PluginCatalogue, CatalogueEntry } from './catalogue.ts';
import { pluginErrors } from './errors.ts';
import { defaultKey } from './key.ts';
import type { InstallBodyType, InstallResultView, PluginView, RemoveBodyType, UsageView } from './schemas.ts';
import {
  deletePlugin,
  entryFields,
  loadStaticConfig,
  pluginSections,
  saveStaticConfig,
  setPlugin,
  type PluginSectionName,
} from './static-config-edit.ts';
import { pluginStatuses } from './status.ts';
import { pluginUsers, resourcesUsing, type MiddlewareSource } from './usage.ts';
import { unvendorPlugin, vendorPlugin, type VendorOptions, type VendorResult } from './vendor.ts';

export interface PluginServiceOptions {
  /** The static config path in effect (settings.yaml wins), or null. */
  currentPath: () => string | null;
  staticConfig: StaticConfigReader;
  middlewares: MiddlewareSource;
  explorer: ProxyExplorer;
  catalogue: PluginCatalogue;
  /** Called after the static config changed (the provider regenerates: the mTLS plugin state may differ). */
  onChanged: () => void;
  log: { debug(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Vendoring (API.md §4.20): the local plugins dir, the registry and the records. */
  vendor: Omit<VendorOptions, 'staticConfigPath'>;
}

export interface InstallOutcome {
  result: InstallResultView;
  created: boolean;
}

const sameModule = (a: string | null, b: string): boolean => a !== null && a.toLowerCase() === b.toLowerCase();

export class PluginService {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: PluginServiceOptions) {}

  /** GET /api/plugins: by key; 503 without a path, 409 when the file cannot be used (a missing file lists nothing). */
  async list(): Promise<PluginView[]> {
    const declared = this.options.staticConfig.declaredPlugins();
    if (!declared.path) throw pluginErrors.noPath();
    if (!declared.entries) {
      const failure = declared.failure;
      if (failure?.kind === 'missing') return [];
      throw pluginErrors.fileUnusable(
        declared.path,
        failure?.line ?? null,
        failure?.message ?? declared.problem ?? 'unusable',
      );
    }
    const statusOf = await pluginStatuses(this.options.explorer, this.options.log);
    const users = pluginUsers(this.options.middlewares);
    const vendored = this.options.vendor.records.get().plugins;
    return declared.entries
      .map((entry): PluginView => {
        const record = entry.local ? vendored[entry.key] : undefined;
        return {
          key: entry.key,
          module_name: entry.module_name,
          version: entry.version,
          local: entry.local,
          ...statusOf(entry.key),
          used_by: users.get(entry.key) ?? [],
          vendored: record ? { version: record.version, sha256: record.sha256, at: record.at } : null,
        };
      })
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : Number(a.local) - Number(b.local)));
  }

  /** GET /api/plugins/catalogue: entries matching `q`, each with `isInstalled`. */
  async catalogue(
    q: string | undefined,
    refresh: boolean,
  ): Promise<{ entries: Array<CatalogueEntry & { isInstalled: boolean }>; stale: boolean }> {
    const answer = await this.options.catalogue.get(refresh);
    const installed = new Set(
      (this.options.staticConfig.declaredPlugins().entries ?? [])
        .filter((e) => !e.local && e.module_name)
        .map((e) => e.module_name!.toLowerCase()),
    );
    const needle = q?.toLowerCase();
    const matches = (entry: CatalogueEntry) =>
      !needle ||
      [entry.name, entry.displayName, entry.summary, entry.import].some(
        (field) => typeof field === 'string' && field.toLowerCase().includes(needle),
      );
    const entries = answer.entries.filter(matches).map((entry) => ({
      ...entry,
      isInstalled: typeof entry.import === 'string' && installed.has(entry.import.toLowerCase()),
    }));
    return { entries, stale: answer.stale };
  }

  /** GET /api/plugins/:name/usage; 404 when the key is neither declared nor used. */
  usage(key: string): UsageView {
    const entry = (this.options.staticConfig.declaredPlugins().entries ?? []).find((e) => e.key === key);
    const ids = pluginUsers(this.options.middlewares).get(key) ?? [];
    if (!entry && ids.length === 0) throw pluginErrors.unknownKey(key);
    return {
      key,
      module_name: entry?.module_name ?? null,
      installed: entry !== undefined,
      used_by: ids.map((id) => ({ middleware_id: id, resources: resourcesUsing(this.options.middlewares, id) })),
    };
  }

  /** POST /api/plugins/install: 200 when the identical entry is there, 201 when added or changed. */
  install(body: InstallBodyType): Promise<InstallOutcome> {
    return this.serial(async () => {
      const moduleName = body.module_name ?? body.moduleName;
      if (!moduleName) throw pluginErrors.invalid('/module_name', 'is required');
      const key = body.key ?? defaultKey(moduleName);
      if (!key) throw pluginErrors.invalid('/key', `is required: no valid key can be derived from ${moduleName}`);
      const file = this.path();
      const loaded = await loadStaticConfig(file);
      const sections = pluginSections(loaded);
      const version = body.version ?? (await this.latestVersion(moduleName));
      const current = entryFields(sections.plugins?.get(key, true));
      const local = sections.localPlugins?.has(key) ?? false;
      const present = sections.plugins?.has(key) ?? false;
      const result = (changed: boolean, backup: string | null): InstallResultView => ({
        key,
        module_name: moduleName,
        version,
        static_config_path: file,
        backup_path: backup,
        changed,
        restart_required: true,
      });
      if (present && !local && current.moduleName === moduleName && current.version === version)
        return { result: result(false, null), created: false };
      if ((present || local) && !body.force) {
        const holder = local ? entryFields(sections.localPlugins?.get(key, true)) : current;
        throw pluginErrors.keyTaken(key, holder.moduleName ?? '(no moduleName)', local ? 'local' : holder.version);
      }
      if (local) deletePlugin(loaded, 'localPlugins', key);
      setPlugin(loaded, key, moduleName, version);
      const { backup_path } = await saveStaticConfig(loaded);
      this.options.log.info({ key, moduleName, version, file }, 'plugin written to the Traefik static config');
      this.options.onChanged();
      return { result: result(true, backup_path), created: true };
    });
  }

  /** DELETE /api/plugins/remove by key (either section) or by module name (every key holding it). */
  remove(target: RemoveBodyType): Promise<void> {
    return this.serial(async () => {
      const moduleName = target.module_name ?? target.moduleName;
      if (!target.key && !moduleName) throw pluginErrors.invalid('/key', 'is required (or module_name)');
      const file = this.path();
      const loaded = await loadStaticConfig(file);
      const sections = pluginSections(loaded);
      const found: Array<{ section: PluginSectionName; key: string }> = [];
      for (const section of ['plugins', 'localPlugins'] as const) {
        for (const pair of sections[section]?.items ?? []) {
          const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
          const matches = target.key ? key === target.key : sameModule(entryFields(pair.value).moduleName, moduleName!);
          if (matches) found.push({ section, key });
        }
      }
      if (found.length === 0) throw pluginErrors.notInstalled(target.key ?? moduleName!);
      const users = pluginUsers(this.options.middlewares);
      for (const { key } of found) {
        const ids = users.get(key) ?? [];
        if (ids.length > 0) throw pluginErrors.inUse(key, ids);
      }
      for (const { section, key } of found) deletePlugin(loaded, section, key);
      await saveStaticConfig(loaded);
      this.options.log.info({ keys: found.map((f) => f.key), file }, 'plugin removed from the Traefik static config');
      this.options.onChanged();
    });
  }

  /** POST /api/plugins/:key/vendor (API.md §4.20): download or `upload`, unpack, move to localPlugins. */
  vendor(key: string, upload: Buffer | undefined): Promise<VendorResult> {
    return this.serial(async () => {
      const result = await vendorPlugin({ ...this.options.vendor, staticConfigPath: () => this.path() }, key, upload);
      this.options.log.info({ key, version: result.version, sha256: result.sha256 }, 'plugin vendored');
      this.options.onChanged();
      return result;
    });
  }

  /** DELETE /api/plugins/:key/vendor: back to `experimental.plugins` with the vendored version. */
  unvendor(key: string): Promise<{ key: string; module_name: string; version: string; restart_required: ['traefik'] }> {
    return this.serial(async () => {
      const result = await unvendorPlugin({ ...this.options.vendor, staticConfigPath: () => this.path() }, key);
      this.options.log.info({ key, version: result.version }, 'plugin no longer vendored');
      this.options.onChanged();
      return result;
    });
  }

  private path(): string {
    const file = this.options.currentPath();
    if (!file) throw pluginErrors.noPath();
    return file;
  }

  /** The catalogue's `latestVersion` of a module (502 when unreachable without cache, 422 when not listed). */
  private async latestVersion(moduleName: string): Promise<string> {
    const { entries } = await this.options.catalogue.get(false);
    const entry = entries.find((e) => typeof e.import === 'string' && sameModule(e.import, moduleName));
    if (!entry || typeof entry.latestVersion !== 'string') throw pluginErrors.notInCatalogue(moduleName);
    return entry.latestVersion;
  }

  /** Edits run one at a time: each reads the file the previous one wrote. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
