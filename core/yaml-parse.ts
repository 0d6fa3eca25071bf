/**
 * YAML parsing that cannot blow the stack (API.md §2.10, §3.3). The `yaml` package lexes and parses
 * iteratively, but composes nodes and converts them to JavaScript recursively: a hand-edited file
 * 2,000 levels deep throws RangeError there, or aborts the whole process ("RegExpCompiler Allocation
 * failed") when V8 compiles a regular expression with the stack exhausted. So the token tree is
 * measured first, iteratively, and a document nested past MAX_NESTING is never composed; aliases,
 * which nest one part of a document inside another, are measured on the composed nodes before toJS.
 */
import {
  Composer,
  Document,
  isAlias,
  isMap,
  isPair,
  isSeq,
  LineCounter,
  Parser,
  YAMLParseError,
  CST,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';
import { MAX_NESTING } from './nesting.ts';

export const YAML_NESTING_MESSAGE = `nests deeper than ${MAX_NESTING} levels of mappings/sequences`;

type Options = ParseOptions & DocumentOptions & SchemaOptions;

/**
 * parseDocument() of the `yaml` package with the nesting limit: a document deeper than MAX_NESTING
 * (aliases expanded) comes back empty with one error positioned at the collection, or the alias,
 * where the limit was passed; errors carry `linePos` and " at line L, column C" unless `prettyErrors: false`.
 */
export function parseYamlDocument(text: string, options: Options = {}): Document.Parsed | Document {
  const lineCounter = options.lineCounter ?? new LineCounter();
  const tokens = [...new Parser(lineCounter.addNewLine).parse(text)];
  const measured = measureTokens(tokens);
  if (measured.tooDeep !== null) {
    const where = stepPath(measured.tooDeep);
    return failed(measured.tooDeep.token.offset, `${where || 'document'} ${YAML_NESTING_MESSAGE}`, lineCounter);
  }
  const composer = new Composer(options);
  let doc: Document.Parsed | null = null;
  for (const next of composer.compose(tokens, true, text.length)) {
    if (!doc) doc = next;
    else {
      doc.errors.push(
        new YAMLParseError(
          next.range.slice(0, 2) as [number, number],
          'MULTIPLE_DOCS',
          'Source contains multiple documents; please use YAML.parseAllDocuments()',
        ),
      );
      break;
    }
  }
  const parsed = doc as Document.Parsed; // compose(…, true) always yields a document
  if (options.prettyErrors !== false) for (const error of parsed.errors) positionError(error, lineCounter);
  if (parsed.errors.length === 0 && measured.aliases) {
    const alias = aliasTooDeep(parsed);
    if (alias) return failed(alias.offset, `alias *${alias.name} ${YAML_NESTING_MESSAGE}`, lineCounter);
  }
  return parsed;
}

/** parse() of the `yaml` package with the nesting limit: throws the document's first error. */
export function parseYamlValue(text: string, options: Options = {}): unknown {
  const doc = parseYamlDocument(text, options);
  if (doc.errors.length > 0) throw doc.errors[0];
  return doc.toJS({ maxAliasCount: 100 });
}

/** An error of the nesting limit: its message names the path (the YAML errors name a position). */
export class YamlNestingError extends YAMLParseError {}

/** An empty document holding one nesting error at `offset`. */
function failed(offset: number, message: string, lineCounter: LineCounter): Document {
  const doc = new Document();
  const error = new YamlNestingError([offset, offset + 1], 'UNEXPECTED_TOKEN', message);
  error.linePos = [lineCounter.linePos(offset)];
  doc.errors.push(error);
  return doc;
}

/** What parseDocument does with a lineCounter: the position, and " at line L, column C" in the message. */
function positionError(error: YAMLParseError, lineCounter: LineCounter): void {
  if (error.pos[0] === -1 || error.linePos) return;
  error.linePos = [lineCounter.linePos(error.pos[0])];
  error.message += ` at line ${error.linePos[0].line}, column ${error.linePos[0].col}`;
}

interface Step {
  token: CST.Token;
  depth: number;
  parent: Step | null;
  /** The key or index under which the parent holds this token. */
  segment: string;
}

/**
 * The first collection token past MAX_NESTING levels (the document's value is level 1) with its
 * path, and whether the tokens hold an alias (`*name`): only then can nodes nest through aliases.
 */
function measureTokens(tokens: CST.Token[]): { tooDeep: Step | null; aliases: boolean } {
  const stack: Step[] = [];
  // pushed last-first, so the first too-deep collection found is the first in the text
  for (let d = tokens.length - 1; d >= 0; d--) {
    const token = tokens[d];
    if (token.type === 'document' && token.value)
      stack.push({ token: token.value, depth: 1, parent: null, segment: '' });
  }
  let aliases = false;
  while (stack.length > 0) {
    const step = stack.pop()!;
    const { token, depth } = step;
    if (token.type === 'alias') aliases = true;
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection') continue;
    if (depth > MAX_NESTING) return { tooDeep: step, aliases };
    const items = token.items as CST.CollectionItem[];
    const sequence = token.type === 'block-seq' || (token.type === 'flow-collection' && token.start.source === '[');
    for (let i = items.length - 1; i >= 0; i--) {
      const { key, value } = items[i];
      // segments are computed for collections only: a scalar's never shows in a path
      if (value && (value.type === 'alias' || isCollectionToken(value)))
        stack.push({ token: value, depth: depth + 1, parent: step, segment: sequence ? String(i) : keyText(key) });
      if (key && isCollectionToken(key)) stack.push({ token: key, depth: depth + 1, parent: step, segment: '?' });
    }
  }
  return { tooDeep: null, aliases };
}

const isCollectionToken = (token: CST.Token): boolean =>
  token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection';

/** A mapping key as text for a path: the scalar's value, `?` for a complex key. */
function keyText(key: CST.Token | null | undefined): string {
  if (!key) return '';
  const scalar = CST.resolveAsScalar(key);
  return scalar ? scalar.value : '?';
}

/** The path of a step, `a/b/0` (JSON Pointer segments without escaping: it is for a message). */
function stepPath(step: Step): string {
  const segments: string[] = [];
  for (let at: Step | null = step; at?.parent; at = at.parent) segments.push(at.segment);
  return segments.reverse().join('/');
}

/**
 * The alias through which the composed document nests past MAX_NESTING levels as JavaScript (maps,
 * sequences, and pairs written in a sequence, which become one-key objects), or a cycle (an alias
 * inside its own anchor). A node is walked again only when reached deeper than before: at most
 * MAX_NESTING walks of each, whatever the aliases multiply.
 */
function aliasTooDeep(doc: Document.Parsed): { offset: number; name: string } | null {
  const deepest = new Map<unknown, number>();
  const resolved = aliasTargets(doc);
  type Entry = { node: unknown; depth: number; via: { offset: number; name: string } | null };
  const stack: Entry[] = [{ node: doc.contents, depth: 1, via: null }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    let node = entry.node;
    let via = entry.via;
    if (isAlias(node)) {
      via = { offset: node.range?.[0] ?? 0, name: node.source };
      node = resolved.get(node);
    }
    if (!isMap(node) && !isSeq(node) && !isPair(node)) continue;
    if (entry.depth > MAX_NESTING) return via ?? { offset: 0, name: '' };
    if ((deepest.get(node) ?? 0) >= entry.depth) continue;
    deepest.set(node, entry.depth);
    const children = isPair(node) ? [node.key, node.value] : (node.items as unknown[]);
    for (const child of children) {
      if (isPair(child) && isMap(node)) {
        // a mapping's own pairs are not a level: their key and value are
        stack.push({ node: child.key, depth: entry.depth + 1, via });
        stack.push({ node: child.value, depth: entry.depth + 1, via });
      } else stack.push({ node: child, depth: entry.depth + 1, via });
    }
  }
  return null;
}

/**
 * Each alias with the node it names: the last node anchored with its name before it in the text, as
 * Alias.resolve() finds it; in one pass (resolve() walks the whole document for every alias).
 */
function aliasTargets(doc: Document.Parsed): Map<unknown, unknown> {
  const targets = new Map<unknown, unknown>();
  const anchors = new Map<string, unknown>();
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isAlias(node)) {
      targets.set(node, anchors.get(node.source));
      continue;
    }
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (anchor) anchors.set(anchor, node);
    const children = isPair(node) ? [node.key, node.value] : isMap(node) || isSeq(node) ? node.items : [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return targets;
}
