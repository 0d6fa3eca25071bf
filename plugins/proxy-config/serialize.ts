/**
 * Byte-deterministic serialisation of the generated config (API.md G11, G12): Traefik's HTTP
 * provider reloads on any byte change, so equal configs must give equal bytes.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { stringifyCanonical } from '../datasource/lossless-json.ts';

/** Compact JSON, keys sorted recursively, BigInt as digits, one trailing newline. */
export function serializeJson(config: unknown): Buffer {
  return Buffer.from(stringifyCanonical(config) + '\n', 'utf8');
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
