/** YAML parsing with positions, and comment-preserving updates of an existing document (API.md §3.2, §3.4). */
import { isMap, isScalar, isSeq, LineCounter, stringify, type Document, type Node } from 'yaml';
import { isObject } from '../ids.ts';
import { nestingPathOf } from '../nesting.ts';
import { parseYamlDocument, YAML_NESTING_MESSAGE, YamlNestingError } from '../yaml-parse.ts';

export interface ParsedYaml {
  value: unknown;
  /** Line/column (1-based) of the node at a JSON Pointer, or of its nearest existing parent. */
  locate(pointer: string): { line: number; column: number } | null;
}

export class YamlSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number | null,
    readonly column: number | null,
    /** Past the nesting limit (the message names the path) rather than invalid YAML. */
    readonly nesting = false,
  ) {
    super(message);
  }
}

function pointerSegments(pointer: string): string[] {
  if (!pointer || pointer === '/') return [];
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/**
 * Parses YAML 1.2 text; throws YamlSyntaxError with the first error's position, also for a document
 * nested deeper than MAX_NESTING levels (API.md §2.10: what code walks recursively stays shallow).
 */
export function parseYaml(text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseYamlDocument(text, { lineCounter, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const nesting = first instanceof YamlNestingError;
    throw new YamlSyntaxError(first.message.split('\n')[0], pos?.line ?? null, pos?.col ?? null, nesting);
  }
  const value = doc.toJS({ maxAliasCount: 100 });
  const parsed: ParsedYaml = {
    value,
    locate(pointer) {
      const segments = pointerSegments(pointer);
      for (let n = segments.length; n >= 0; n--) {
        const node = (n === 0 ? doc.contents : doc.getIn(segments.slice(0, n), true)) as Node | undefined;
        if (node && node.range) {
          const pos = lineCounter.linePos(node.range[0]);
          return { line: pos.line, column: pos.col };
        }
      }
      return null;
    },
  };
  // the token tree is at most MAX_NESTING deep; as JavaScript, a pair written in a sequence adds a level
  const tooDeep = nestingPathOf(value);
  if (tooDeep !== null) {
    const pos = parsed.locate(tooDeep);
    throw new YamlSyntaxError(
      `${tooDeep.replace(/^\//, '')} ${YAML_NESTING_MESSAGE}`,
      pos?.line ?? null,
      pos?.column ?? null,
      true,
    );
  }
  return parsed;
}

/** Updates `node` in place to hold `value`, keeping nodes (and their comments) whose value is unchanged. */
function merge(doc: Document, node: unknown, value: unknown): unknown {
  if (isObject(value) && isMap(node)) {
    for (const pair of [...node.items]) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (!(key in value) || value[key] === undefined) node.delete(pair.key);
    }
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const existing = node.get(key, true);
      node.set(key, existing === undefined ? doc.createNode(v) : merge(doc, existing, v));
    }
    return node;
  }
  if (Array.isArray(value) && isSeq(node) && node.items.length === value.length) {
    node.items = node.items.map((item, i) => merge(doc, item, value[i])) as typeof node.items;
    return node;
  }
  if (isScalar(node) && node.value === value) return node;
  return doc.createNode(value);
}

const STRINGIFY = { lineWidth: 0, indent: 2 } as const;

/** New YAML text for `value`: edits `previousText` when given (comments, key order kept), else fresh. */
export function renderYaml(value: unknown, previousText?: string): string {
  if (previousText !== undefined) {
    const doc = parseYamlDocument(previousText);
    if (doc.errors.length === 0 && isObject(value) && isMap(doc.contents)) {
      merge(doc, doc.contents, value);
      return doc.toString(STRINGIFY);
    }
  }
  return stringify(value, STRINGIFY);
}
