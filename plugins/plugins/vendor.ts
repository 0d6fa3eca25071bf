/**
 * Vendoring of Traefik plugins (API.md §4.20): a plugin's zip (from the registry Traefik uses, or
 * uploaded) is checked and unpacked into `<plugins_local_dir>/src/<module>/`, and its static config
 * entry moves from `experimental.plugins` to `experimental.localPlugins`, so Traefik starts without
 * the network. The record `{version, sha256, at}` lives in the data dir (`plugins-vendored.yaml`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { rename, rm, stat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import type { StoreDocument } from '../../core/store/types.ts';
import { unpackPlugin } from './archive.ts';
import { pluginErrors } from './errors.ts';
import { entryFields, loadStaticConfig, movePlugin, pluginSections, saveStaticConfig } from './static-config-edit.ts';

export const VendoredRecord = Type.Object({
  module_name: Type.String(),
  version: Type.String(),
  sha256: Type.String(),
  at: Type.String(),
});
export const VendoredSchema = Type.Object({ plugins: Type.Record(Type.String(), VendoredRecord) });
export type VendoredFile = Static<typeof VendoredSchema>;

export const UPLOAD_LIMIT = 20 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 60_000;

export interface VendorOptions {
  staticConfigPath: () => string;
  localDir: () => string | null;
  registryUrl: () => string;
  records: StoreDocument<VendoredFile>;
  now: () => Date;
}

export interface VendorResult {
  key: string;
  module_name: string;
  version: string;
  local: true;
  path: string;
  sha256: string;
  restart_required: ['traefik'];
}

/** A Go module path usable as a directory: `host/owner/name` segments, nothing that walks out. */
const MODULE = /^[A-Za-z0-9][A-Za-z0-9._~-]*(\/[A-Za-z0-9._~-]+)+$/;

function moduleDir(localDir: string, moduleName: string): string {
  if (!MODULE.test(moduleName) || moduleName.split('/').some((s) => s === '.' || s === '..'))
    throw pluginErrors.invalid('/module_name', `${moduleName} is not a module path that can name a directory`);
  return path.join(localDir, 'src', ...moduleName.split('/'));
}

/** GET `<registry>/public/download/<module>/<version>`, as Traefik does; 502 on any failure. */
async function download(registry: string, moduleName: string, version: string): Promise<Buffer> {
  const url = `${registry.replace(/\/+$/, '')}/public/download/${moduleName}/${encodeURIComponent(version)}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS), redirect: 'follow' });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw pluginErrors.registryDown(url, cause);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw pluginErrors.registryDown(url, `answered ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > UPLOAD_LIMIT) {
    await response.body?.cancel();
    throw pluginErrors.invalidArchive(`${declared} bytes, more than ${UPLOAD_LIMIT / 1024 / 1024} MiB`);
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  if (bytes.length > UPLOAD_LIMIT)
    throw pluginErrors.invalidArchive(`${bytes.length} bytes, more than ${UPLOAD_LIMIT / 1024 / 1024} MiB`);
  return bytes;
}

const exists = async (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );

/**
 * Unpacks into a temp dir beside `target`, then swaps it in by rename: a failure at any step leaves
 * the previous copy (if any) where it was.
 */
async function install(zip: Buffer, moduleName: string, target: string): Promise<void> {
  const parent = path.dirname(target);
  try {
    await mkdir(parent, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw pluginErrors.localDirUnusable(parent, `cannot be created (${(err as NodeJS.ErrnoException).code})`);
  }
  const tag = randomBytes(6).toString('hex');
  const fresh = path.join(parent, `.${path.basename(target)}.vendor-${tag}`);
  const old = path.join(parent, `.${path.basename(target)}.old-${tag}`);
  try {
    await unpackPlugin(zip, moduleName, fresh);
  } catch (err) {
    await rm(fresh, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code) throw pluginErrors.localDirUnusable(parent, `cannot be written (${code})`);
    throw err;
  }
  const hadOld = await exists(target);
  try {
    if (hadOld) await rename(target, old);
    await rename(fresh, target);
  } catch (err) {
    if (hadOld && !(await exists(target))) await rename(old, target).catch(() => undefined);
    await rm(fresh, { recursive: true, force: true });
    throw pluginErrors.localDirUnusable(parent, `cannot be replaced (${(err as NodeJS.ErrnoException).code})`);
  }
  if (hadOld) await rm(old, { recursive: true, force: true });
}

/** POST /api/plugins/:key/vendor: `upload` is the zip sent by the client, undefined to download it. */
export async function vendorPlugin(
  options: VendorOptions,
  key: string,
  upload: Buffer | undefined,
): Promise<VendorResult> {
  const localDir = options.localDir();
  if (!localDir) throw pluginErrors.noLocalDir();
  const loaded = await loadStaticConfig(options.staticConfigPath());
  const sections = pluginSections(loaded);
  const remote = entryFields(sections.plugins?.get(key, true));
  const record = options.records.get().plugins[key];
  // a key already vendored may be vendored again (a new upload, or the same version re-downloaded)
  const local = record && sections.localPlugins?.has(key) ? record : null;
  const moduleName = remote.moduleName ?? local?.module_name;
  const version = remote.moduleName ? remote.version : local?.version;
  if (!moduleName) throw pluginErrors.notInstalled(key);
  if (!version) throw pluginErrors.invalid('/version', `experimental.plugins.${key} has no version to vendor`);
  const target = moduleDir(localDir, moduleName);
  const zip = upload ?? (await download(options.registryUrl(), moduleName, version));
  const sha256 = createHash('sha256').update(zip).digest('hex');
  await install(zip, moduleName, target);
  if (!local) {
    movePlugin(loaded, 'plugins', 'localPlugins', key, { moduleName });
    await saveStaticConfig(loaded);
  }
  const at = options.now().toISOString();
  await options.records.update((current) => ({
    plugins: { ...current.plugins, [key]: { module_name: moduleName, version, sha256, at } },
  }));
  return { key, module_name: moduleName, version, local: true, path: target, sha256, restart_required: ['traefik'] };
}

/** DELETE /api/plugins/:key/vendor: back to `experimental.plugins` at the vendored version; the files go. */
export async function unvendorPlugin(
  options: VendorOptions,
  key: string,
): Promise<{ key: string; module_name: string; version: string; restart_required: ['traefik'] }> {
  const record = options.records.get().plugins[key];
  const loaded = await loadStaticConfig(options.staticConfigPath());
  if (!record || !pluginSections(loaded).localPlugins?.has(key)) throw pluginErrors.notVendored(key);
  movePlugin(loaded, 'localPlugins', 'plugins', key, { moduleName: record.module_name, version: record.version });
  await saveStaticConfig(loaded);
  await options.records.update((current) => {
    const { [key]: _gone, ...rest } = current.plugins;
    return { plugins: rest };
  });
  // the files go unless another local entry still uses the module
  const stillUsed = (pluginSections(loaded).localPlugins?.items ?? []).some(
    (pair) => entryFields(pair.value).moduleName === record.module_name,
  );
  const localDir = options.localDir();
  if (localDir && !stillUsed) await rm(moduleDir(localDir, record.module_name), { recursive: true, force: true });
  return { key, module_name: record.module_name, version: record.version, restart_required: ['traefik'] };
}
