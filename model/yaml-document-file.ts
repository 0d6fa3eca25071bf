/**
 * A YAML file read for an edit through the `yaml` package's Document API, so comments and key order
 * stay (API.md §4.6 static config edits, §4.20 entry points and compose ports). Shared by the
 * plugins and static groups; each passes the errors its API answers (409s naming the file).
 */
import { readFile, stat } from 'node:fs/promises';
import { isMap, isScalar, LineCounter, YAMLMap, type Document, type Node } from 'yaml';
import { parseYamlDocument } from '../core/yaml-parse.ts';

/** The errors a caller answers: the file cannot be read or parsed, or a node is not a mapping. */
export interface YamlFileErrors {
  unusable(line: number | null, reason: string): Error;
  notMapping(where: string, line: number | null): Error;
}

export interface YamlDocumentFile {
  file: string;
  /** the bytes read; null when the file did not exist */
  text: string | null;
  mode: number;
  doc: Document;
  lines: LineCounter;
  errors: YamlFileErrors;
}

/** How edited documents are written back. */
export const YAML_STRINGIFY = { lineWidth: 0, indent: 2 } as const;

/** Reads and parses `file`; a missing file is an empty document unless `mustExist`; anything unusable → `errors.unusable`. */
export async function loadYamlDocumentFile(
  file: string,
  mustExist: boolean,
  errors: YamlFileErrors,
): Promise<YamlDocumentFile> {
  let text: string | null = null;
  let mode = 0o644;
  try {
    text = await readFile(file, 'utf8');
    mode = (await stat(file)).mode & 0o777;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code !== 'ENOENT' || mustExist) throw errors.unusable(null, `cannot be read (${code})`);
  }
  const lines = new LineCounter();
  const doc = parseYamlDocument(text ?? '', { lineCounter: lines, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) throw errors.unusable(first.linePos?.[0]?.line ?? null, first.message.split('\n')[0]);
  return { file, text, mode, doc, lines, errors };
}

/** 1-based line of a node, when it came from the file. */
export function lineOf(loaded: YamlDocumentFile, node: unknown): number | null {
  const range = (node as Node | null)?.range;
  return range ? loaded.lines.linePos(range[0]).line : null;
}

const isNullScalar = (node: unknown): boolean => isScalar(node) && (node.value === null || node.value === undefined);

/** A mapping child of `parent`: null when absent or an empty `key:`; anything else → `errors.notMapping`. */
export function mapAt(loaded: YamlDocumentFile, parent: YAMLMap, key: string, where: string): YAMLMap | null {
  const node = parent.get(key, true);
  if (node === undefined || isNullScalar(node)) return null;
  if (isMap(node)) return node as YAMLMap;
  throw loaded.errors.notMapping(where, lineOf(loaded, node));
}

/** The top-level mapping, created for an empty document when `create`; a list or scalar document → `errors.notMapping`. */
export function rootOf(loaded: YamlDocumentFile, create: boolean): YAMLMap | null {
  const { contents } = loaded.doc;
  if (contents === null || isNullScalar(contents)) {
    if (!create) return null;
    loaded.doc.contents = new YAMLMap() as never;
    return loaded.doc.contents as unknown as YAMLMap;
  }
  if (isMap(contents)) return contents as YAMLMap;
  throw loaded.errors.notMapping('the top level', lineOf(loaded, contents));
}

/** `key` under `parent`, created as an empty mapping when absent. */
export function ensureMap(loaded: YamlDocumentFile, parent: YAMLMap, key: string, where: string): YAMLMap {
  const existing = mapAt(loaded, parent, key, where);
  if (existing) return existing;
  const created = new YAMLMap();
  parent.set(key, created);
  return created;
}
