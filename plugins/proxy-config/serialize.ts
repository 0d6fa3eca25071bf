/**
 * Byte-deterministic serialisation of the generated config (API.md G11, G12): Traefik's HTTP
 * provider reloads on any byte change, so equal configs must give equal bytes.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { stringifyCanonical } from '../../model/lossless-json.ts';
import { isObject } from '../../core/ids.ts';

/** The JSON of one map (`http.routers` …) as written last time: its entries and their `"key":value` texts. */
interface MapText {
  keys: string[];
  values: unknown[];
  pairs: string[];
  /** `{…}` as UTF-8: an unchanged map is copied into the body, not encoded again */
  bytes: Buffer;
}

/**
 * JSON text of the maps of the previous generation (`http.routers`, `http.middlewares` …), entry
 * by entry. Generation is copy-on-write and memoised (unchanged upstream objects, stored configs
 * and replayed routers keep their identity), and nothing changes an object of the config once it
 * is generated, so the same key holding the same object implies the same text: an unchanged map
 * is reused whole, a changed one re-serialises only its new entries.
 */
export class FragmentCache {
  private previous = new Map<string, MapText>();
  private current = new Map<string, MapText>();

  /** The canonical JSON of the map at `path` (UTF-8), reusing what the previous generation wrote. */
  map(path: string, value: Record<string, unknown>): Buffer {
    const keys = Object.keys(value).sort();
    const before = this.previous.get(path);
    let entry = before && unchanged(before, keys, value) ? before : undefined;
    if (!entry) {
      const values = new Array<unknown>(keys.length);
      const pairs = new Array<string>(keys.length);
      let j = 0;
      let n = 0;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        const item = value[key];
        values[i] = item;
        if (item === undefined) continue;
        // both key lists are sorted: advance through the old one alongside
        while (before && j < before.keys.length && before.keys[j] < key) j++;
        pairs[n++] =
          before &&
          j < before.keys.length &&
          before.keys[j] === key &&
          before.values[j] === item &&
          before.pairs[j] !== undefined
            ? before.pairs[j]
            : `${JSON.stringify(key)}:${stringifyCanonical(item)}`;
      }
      pairs.length = n;
      entry = { keys, values, pairs: realign(keys, values, pairs), bytes: Buffer.from(`{${pairs.join(',')}}`, 'utf8') };
    }
    this.current.set(path, entry);
    return entry.bytes;
  }

  /** Ends a generation: maps it did not write are forgotten. */
  rotate(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}

/** Whether a map holds exactly the keys and objects it held when `before` was written. */
function unchanged(before: MapText, keys: string[], value: Record<string, unknown>): boolean {
  if (before.keys.length !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    if (before.keys[i] !== keys[i] || before.values[i] !== value[keys[i]]) return false;
  }
  return true;
}

/** Pair texts indexed like `keys` (undefined values have no pair), for the next merge. */
function realign(keys: string[], values: unknown[], pairs: string[]): string[] {
  if (pairs.length === keys.length) return pairs;
  const out = new Array<string>(keys.length);
  let n = 0;
  for (let i = 0; i < keys.length; i++) if (values[i] !== undefined) out[i] = pairs[n++];
  return out;
}

/**
 * Canonical JSON with the maps two levels down (`http.routers` …) written through the cache, as
 * chunks: text of the levels above, UTF-8 bytes of the maps.
 */
function writeCached(
  value: unknown,
  path: string,
  depth: number,
  cache: FragmentCache,
  out: (string | Buffer)[],
): void {
  if (!isObject(value)) {
    out.push(stringifyCanonical(value));
    return;
  }
  if (depth === 2) {
    out.push(cache.map(path, value));
    return;
  }
  out.push('{');
  let first = true;
  for (const key of Object.keys(value).sort()) {
    if (value[key] === undefined) continue;
    out.push(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    writeCached(value[key], `${path}\0${key}`, depth + 1, cache, out);
  }
  out.push('}');
}

/**
 * Compact JSON, keys sorted recursively, BigInt as digits, one trailing newline. With a cache the
 * text of map entries already serialised in the previous generation is reused (same bytes).
 */
export function serializeJson(config: unknown, cache?: FragmentCache): Buffer {
  if (!cache) return Buffer.from(stringifyCanonical(config) + '\n', 'utf8');
  const chunks: (string | Buffer)[] = [];
  writeCached(config, '', 0, cache, chunks);
  chunks.push('\n');
  cache.rotate();
  // adjacent text chunks are joined first: few Buffers to concatenate
  const buffers: Buffer[] = [];
  let text = '';
  for (const chunk of chunks) {
    if (typeof chunk === 'string') {
      text += chunk;
      continue;
    }
    if (text) buffers.push(Buffer.from(text, 'utf8'));
    text = '';
    buffers.push(chunk);
  }
  if (text) buffers.push(Buffer.from(text, 'utf8'));
  return Buffer.concat(buffers);
}

/** YAML 1.2: keys sorted, 2-space indent, no line folding, no anchors, BigInt as digits. */
export function serializeYaml(config: unknown): Buffer {
  const text = stringify(config, {
    indent: 2,
    lineWidth: 0,
    minContentWidth: 0,
    sortMapEntries: (a, b) => codeUnitOrder(String(a.key), String(b.key)),
    // the generator may share an object between two places; anchors would make the bytes depend on that
    aliasDuplicateObjects: false,
  });
  return Buffer.from(text, 'utf8');
}

/** Strong ETag of a body: the first 32 hex digits of its SHA-256, quoted (G12). */
export function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
}

function codeUnitOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
