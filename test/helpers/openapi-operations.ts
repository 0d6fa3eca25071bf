/**
 * The write operations of the app's own OpenAPI document, bodies built from their request schemas,
 * data dir snapshots and a listening app: shared by the validation tests that walk every write route
 * (validation/deep-nesting, validation/route-fuzz).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  $ref?: string;
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  minLength?: number;
  minimum?: number;
};

export interface Operation {
  method: string;
  /** The path with every `{param}` replaced by `probe`. */
  url: string;
  /** The path as the document writes it (`{id}` left in). */
  template: string;
  /** Top-level body fields of the request schema, and the nested ones (JSON Pointers, no root). */
  fields: string[];
  /** The JSON request body schema, if any. */
  schema?: Schema;
  /** Names of the query parameters. */
  query: string[];
}

/** Pointers of every property in a request schema (nested objects too, and array items as /0). */
export function fieldsOf(schema: Schema | undefined, prefix = '', depth = 0): string[] {
  if (!schema || depth > 4) return [];
  const out: string[] = [];
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const at = `${prefix}/${name}`;
    out.push(at, ...fieldsOf(child, at, depth + 1));
    if (child.items) out.push(`${at}/0`, ...fieldsOf(child.items, `${at}/0`, depth + 1));
  }
  return out;
}

type Document = {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content?: Record<string, { schema?: Schema }> };
        parameters?: Array<{ in: string; name: string }>;
      }
    >
  >;
};

/** Every POST/PUT/PATCH/DELETE of GET /api/openapi.json, `skip` paths left out. */
export async function writeOperations(
  app: FastifyInstance,
  skip: ReadonlySet<string> = new Set(),
  placeholder = 'probe',
): Promise<Operation[]> {
  const document = (await app.inject({ url: '/api/openapi.json' })).json() as Document;
  const operations: Operation[] = [];
  for (const [url, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method) || skip.has(url)) continue;
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase(),
        url: url.replaceAll(/\{[^}]+\}/g, placeholder),
        template: url,
        fields: fieldsOf(schema),
        schema,
        query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      });
    }
  return operations;
}

/** A body with `inner` at `pointer` (''= the root), as JSON text. */
export function bodyWith(pointer: string, inner: string): string {
  const segments = pointer.split('/').slice(1);
  let text = inner;
  for (const segment of segments.reverse())
    text = /^\d+$/.test(segment) ? `[${text}]` : `{${JSON.stringify(segment)}:${text}}`;
  return text;
}

/**
 * Write routes that start Docker, network, restore or install work: the fuzz tests send them only
 * bodies that cannot be valid (test/validation/route-fuzz, nested-fuzz).
 */
export const EXTERNAL_WORK = [
  /^\/api\/container\//,
  /^\/api\/backup\/restore$/,
  /^\/api\/static\/apply$/,
  /^\/api\/history\/\{rev\}\/restore$/,
  /^\/api\/plugins\/install$/,
  /^\/api\/plugins\/\{key\}\/vendor$/,
  /^\/api\/datasource\/\{name\}\/test$/,
  /^\/api\/notifications\/channels\/\{id\}\/test$/,
  /^\/api\/jobs/,
];

/** A plausible value for a schema: its required properties filled with typed placeholders. */
export function sampleOf(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const alternative = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (alternative) return sampleOf(alternative, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return 'probe'.padEnd(schema.minLength ?? 0, 'x');
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    default: {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sampleOf(schema.properties?.[name], depth + 1);
      return out;
    }
  }
}

/** Every file under the data dir with its hash, `except` file names left out. */
export async function snapshot(dir: string, except: ReadonlySet<string> = new Set()): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || except.has(entry.name)) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(
      path.relative(dir, full),
      createHash('sha256')
        .update(await readFile(full))
        .digest('hex'),
    );
  }
  return files;
}

/** Listens on 127.0.0.1 (a free port) and returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}
