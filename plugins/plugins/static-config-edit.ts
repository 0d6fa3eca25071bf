/**
 * Edits of Traefik's static configuration through the YAML document API (API.md §4.6): comments and
 * key order stay, a missing file is created, the previous bytes go to one rotating `<path>.bak`, and
 * the new bytes are written atomically.
 */
import { isMap, isScalar, YAMLMap } from 'yaml';
import { writeAtomic } from '../../core/store/atomic-write.ts';
import {
  ensureMap,
  loadYamlDocumentFile,
  mapAt,
  rootOf as root,
  YAML_STRINGIFY,
  type YamlDocumentFile,
} from '../../model/yaml-document-file.ts';
import { pluginErrors } from './errors.ts';

/** The static config as parsed for an edit. */
export type LoadedStaticConfig = YamlDocumentFile;

/** The two plugin sections (null when absent); `experimental` is null when that key is absent. */
export interface PluginSections {
  experimental: YAMLMap | null;
  plugins: YAMLMap | null;
  localPlugins: YAMLMap | null;
}

export type PluginSectionName = 'plugins' | 'localPlugins';

/** Reads and parses `file`; a missing file is an empty document; unreadable or invalid → 409 `conflict`. */
export function loadStaticConfig(file: string): Promise<LoadedStaticConfig> {
  return loadYamlDocumentFile(file, false, {
    unusable: (line, reason) => pluginErrors.fileUnusable(file, line, reason),
    notMapping: (where, line) => pluginErrors.notMapping(file, where, line),
  });
}

/** The plugin sections, checked to be mappings (409 `conflict` otherwise). */
export function pluginSections(loaded: LoadedStaticConfig): PluginSections {
  const top = root(loaded, false);
  const experimental = top ? mapAt(loaded, top, 'experimental', 'experimental') : null;
  return {
    experimental,
    plugins: experimental ? mapAt(loaded, experimental, 'plugins', 'experimental.plugins') : null,
    localPlugins: experimental ? mapAt(loaded, experimental, 'localPlugins', 'experimental.localPlugins') : null,
  };
}

/** `section` under `experimental`, created (with `experimental`) when absent. */
function ensureSection(loaded: LoadedStaticConfig, section: PluginSectionName): YAMLMap {
  const experimental = ensureMap(loaded, root(loaded, true)!, 'experimental', 'experimental');
  return ensureMap(loaded, experimental, section, `experimental.${section}`);
}

/**
 * Sets `experimental.plugins.<key>` to `{moduleName, version}`. An existing mapping is edited in
 * place (its comments and other settings stay; `hash` goes, it belongs to the old version).
 */
export function setPlugin(loaded: LoadedStaticConfig, key: string, moduleName: string, version: string): void {
  const plugins = ensureSection(loaded, 'plugins');
  const existing = plugins.get(key, true);
  if (isMap(existing)) {
    existing.set('moduleName', moduleName);
    existing.set('version', version);
    existing.delete('hash');
    return;
  }
  plugins.set(key, loaded.doc.createNode({ moduleName, version }));
}

/** Deletes `experimental.<section>.<key>`, then drops the section and `experimental` when left empty. */
export function deletePlugin(loaded: LoadedStaticConfig, section: PluginSectionName, key: string): void {
  const { experimental, [section]: map } = pluginSections(loaded);
  if (!experimental || !map) return;
  map.delete(key);
  if (map.items.length === 0) experimental.delete(section);
  if (experimental.items.length === 0) root(loaded, false)?.delete('experimental');
}

/** Writes the edited document: the previous bytes to `<file>.bak` (when the file existed), then the new bytes atomically. */
export async function saveStaticConfig(loaded: LoadedStaticConfig): Promise<{ backup_path: string | null }> {
  const text = loaded.doc.toString(YAML_STRINGIFY);
  let backup: string | null = null;
  if (loaded.text !== null) {
    backup = `${loaded.file}.bak`;
    await writeAtomic(backup, loaded.text, { mode: loaded.mode });
  }
  await writeAtomic(loaded.file, text, { mode: loaded.mode });
  return { backup_path: backup };
}

/** `{moduleName, version}` strings of an entry node (null when absent or not strings). */
export function entryFields(node: unknown): { moduleName: string | null; version: string | null } {
  if (!isMap(node)) return { moduleName: null, version: null };
  const field = (name: string) => {
    const value = node.get(name);
    return typeof value === 'string' ? value : null;
  };
  return { moduleName: field('moduleName'), version: field('version') };
}

/**
 * Moves `experimental.<from>.<key>` to `experimental.<to>.<key>` (vendoring, API.md §4.20): the
 * same pair node moves, so its comments and other settings stay; `version` and `hash` are set for
 * `plugins` and dropped for `localPlugins`. Returns false when the key is not in `from`.
 */
export function movePlugin(
  loaded: LoadedStaticConfig,
  from: PluginSectionName,
  to: PluginSectionName,
  key: string,
  fields: { moduleName: string; version?: string },
): boolean {
  const source = pluginSections(loaded)[from];
  const pair = source?.items.find((item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === key);
  if (!pair) return false;
  // a comment above the section's first key belongs to the map node: it travels with that key
  if (source!.items[0] === pair && source!.commentBefore && isScalar(pair.key) && !pair.key.commentBefore) {
    pair.key.commentBefore = source!.commentBefore;
    source!.commentBefore = undefined;
  }
  const target = ensureSection(loaded, to);
  let value = pair.value;
  if (!isMap(value)) value = loaded.doc.createNode({});
  const map = value as YAMLMap;
  map.set('moduleName', fields.moduleName);
  if (fields.version) map.set('version', fields.version);
  else map.delete('version');
  map.delete('hash');
  pair.value = map;
  target.delete(key);
  target.items.push(pair as never);
  deletePlugin(loaded, from, key);
  return true;
}
