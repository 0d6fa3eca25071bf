/**
 * YAML files edited as documents (API.md §4.20): comments and key order stay (the `yaml` package's
 * Document API, as plugins/plugins/static-config-edit.ts), one `<file>.bak` keeps the previous bytes,
 * and each file is replaced atomically. Several files are saved together or not at all: when a later
 * write fails, the files already written get their previous bytes back.
 */
import { access, constants, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isScalar, LineCounter, YAMLMap, type Document, type Node } from 'yaml';
import { writeAtomic } from '../../core/store/atomic-write.ts';
import { parseYamlDocument } from '../../core/yaml-parse.ts';
import { staticErrors } from './errors.ts';

export interface YamlFile {
  /** what the file is, for messages: "Traefik static config", "compose file" */
  label: string;
  file: string;
  /** the bytes read; null when the file did not exist */
  text: string | null;
  mode: number;
  doc: Document;
  lines: LineCounter;
}

const STRINGIFY = { lineWidth: 0, indent: 2 } as const;

/** Reads and parses `file`; a missing file is an empty document unless `mustExist`; anything unusable → 409. */
export async function loadYamlFile(label: string, file: string, mustExist: boolean): Promise<YamlFile> {
  let text: string | null = null;
  let mode = 0o644;
  try {
    text = await readFile(file, 'utf8');
    mode = (await stat(file)).mode & 0o777;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code !== 'ENOENT' || mustExist) throw staticErrors.fileUnusable(label, file, null, `cannot be read (${code})`);
  }
  const lines = new LineCounter();
  const doc = parseYamlDocument(text ?? '', { lineCounter: lines, uniqueKeys: true });
  const first = doc.errors[0];
  if (first)
    throw staticErrors.fileUnusable(label, file, first.linePos?.[0]?.line ?? null, first.message.split('\n')[0]);
  return { label, file, text, mode, doc, lines };
}

/** 1-based line of a node, when it came from the file. */
export function lineOf(loaded: YamlFile, node: unknown): number | null {
  const range = (node as Node | null)?.range;
  return range ? loaded.lines.linePos(range[0]).line : null;
}

const isNullScalar = (node: unknown): boolean => isScalar(node) && (node.value === null || node.value === undefined);

/** A mapping child of `parent`: null when absent or an empty `key:`; anything else → 409. */
export function mapAt(loaded: YamlFile, parent: YAMLMap, key: string, where: string): YAMLMap | null {
  const node = parent.get(key, true);
  if (node === undefined || isNullScalar(node)) return null;
  if (isMap(node)) return node as YAMLMap;
  throw staticErrors.notMapping(loaded.label, loaded.file, where, lineOf(loaded, node));
}

/** The top-level mapping, created for an empty document when `create`; a list or scalar document → 409. */
export function rootOf(loaded: YamlFile, create: boolean): YAMLMap | null {
  const { contents } = loaded.doc;
  if (contents === null || isNullScalar(contents)) {
    if (!create) return null;
    loaded.doc.contents = new YAMLMap() as never;
    return loaded.doc.contents as unknown as YAMLMap;
  }
  if (isMap(contents)) return contents as YAMLMap;
  throw staticErrors.notMapping(loaded.label, loaded.file, 'the top level', lineOf(loaded, contents));
}

/** `key` under `parent`, created as an empty mapping when absent. */
export function ensureMap(loaded: YamlFile, parent: YAMLMap, key: string, where: string): YAMLMap {
  const existing = mapAt(loaded, parent, key, where);
  if (existing) return existing;
  const created = new YAMLMap();
  parent.set(key, created);
  return created;
}

/** 409 unless the file (or, when missing, its directory) is writable: checked before any file is written. */
async function checkWritable(loaded: YamlFile): Promise<void> {
  const target = loaded.text === null ? path.dirname(loaded.file) : loaded.file;
  try {
    await access(target, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw staticErrors.fileUnusable(loaded.label, loaded.file, null, `cannot be written (${code})`);
  }
}

/**
 * Saves the edited documents: each file's previous bytes to `<file>.bak`, then the new bytes
 * atomically. All or nothing: a failed write puts back the files already written (their bytes, or
 * no file when there was none) and answers 409.
 */
export async function saveYamlFiles(files: YamlFile[]): Promise<{ backups: string[] }> {
  for (const loaded of files) await checkWritable(loaded);
  const rendered = files.map((loaded) => loaded.doc.toString(STRINGIFY));
  const written: YamlFile[] = [];
  const backups: string[] = [];
  let current = files[0];
  try {
    for (const [index, loaded] of files.entries()) {
      current = loaded;
      if (loaded.text !== null) {
        await writeAtomic(`${loaded.file}.bak`, loaded.text, { mode: loaded.mode });
        backups.push(`${loaded.file}.bak`);
      }
      written.push(loaded);
      await writeAtomic(loaded.file, rendered[index], { mode: loaded.mode });
    }
  } catch (err) {
    for (const loaded of written) await restore(loaded);
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw staticErrors.fileUnusable(current.label, current.file, null, `cannot be written (${code})`);
  }
  return { backups };
}

/** Puts a file's previous bytes back (best effort: the write that failed is what the answer reports). */
async function restore(loaded: YamlFile): Promise<void> {
  try {
    if (loaded.text !== null) await writeAtomic(loaded.file, loaded.text, { mode: loaded.mode });
    else await rm(loaded.file, { force: true });
  } catch {
    // nothing more can be done; the .bak holds the previous bytes
  }
}
