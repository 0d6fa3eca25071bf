/**
 * Byte-deterministic serialisation of the generated config (API.md G11, G12): Traefik's HTTP
 * provider reloads on any byte change, so equal configs must give equal bytes.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { stringifyCanonical } from '../datasource/lossless-json.ts';

/**
 * JSON text of the objects of the previous generation, by identity. Generation is copy-on-write
 * (unchanged upstream objects and our stored configs keep their identity), and nothing changes an
 * object of the config once it is generated, so identity implies the same text.
 */
export class FragmentCache {
  private previous = new Map<object, string>();
  private current = new Map<object, string>();

  get(value: object): string | undefined {
    const text = this.current.get(value) ?? this.previous.get(value);
    if (text !== undefined) this.current.set(value, text);
    return text;
  }

  set(value: object, text: string): void {
    this.current.set(value, text);
  }

  /** Ends a generation: what it did not use is forgotten. */
  rotate(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Canonical JSON with the objects below the maps (`http.routers.<name>` …) taken from the cache. */
function writeCached(value: unknown, depth: number, cache: FragmentCache): string {
  if (!isPlainObject(value)) return stringifyCanonical(value);
  if (depth >= 3) {
    const hit = cache.get(value);
    if (hit !== undefined) return hit;
    const keys = Object.keys(value);
    // `{<type>: <body>}` wrappers of our middlewares and services are new each time; their body is not
    const text = depth === 3 && keys.length === 1 && isPlainObject(value[keys[0]])
      ? `{${JSON.stringify(keys[0])}:${writeCached(value[keys[0]], depth + 1, cache)}}`
      : stringifyCanonical(value);
    cache.set(value, text);
    return text;
  }
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    if (value[key] !== undefined) parts.push(`${JSON.stringify(key)}:${writeCached(value[key], depth + 1, cache)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * Compact JSON, keys sorted recursively, BigInt as digits, one trailing newline. With a cache the
 * text of objects already serialised in the previous generation is reused (same bytes).
 */
export function serializeJson(config: unknown, cache?: FragmentCache): Buffer {
  if (!cache) return Buffer.from(stringifyCanonical(config) + '\n', 'utf8');
  const text = writeCached(config, 0, cache);
  cache.rotate();
  return Buffer.from(text + '\n', 'utf8');
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
