/**
 * Request aliases of the Go middleware-manager client (API.md §4.4, §7), mapped to the canonical
 * fields before validation: comma-separated strings for lists, `mtls_*` / `tcp_*` / … names, and
 * JSON text where an object, array, number or boolean is expected. A canonical field sent together
 * with its alias wins.
 */
import type { FastifyRequest } from 'fastify';
import type { ConfigKind } from './resource-config.ts';

type Form = 'list' | 'json' | 'text' | 'domains' | 'interval';
interface Alias {
  to: string;
  form: Form;
}

type BodyKind = ConfigKind | 'external';
type Body = Record<string, unknown>;

type FieldForms = ReadonlyArray<readonly [field: string, form: Form]>;

/** Each field under its own name and under `<prefix><field>`, the old client's name for it. */
function withPrefixedAliases(prefix: string, fields: FieldForms): Record<string, Alias> {
  return Object.fromEntries(
    fields.flatMap(([field, form]) => [
      [field, { to: field, form }],
      [`${prefix}${field}`, { to: field, form }],
    ]),
  );
}

/** Per body: field (canonical or alias) → canonical field and how its value is read. */
const FIELDS: Record<BodyKind, Record<string, Alias>> = {
  http: { entrypoints: { to: 'entrypoints', form: 'list' } },
  tls: {
    ...withPrefixedAliases('tls_', [['domains', 'domains']]),
    cert_resolver: { to: 'cert_resolver', form: 'text' },
    options: { to: 'options', form: 'text' },
  },
  tcp: {
    ...withPrefixedAliases('tcp_', [
      ['enabled', 'json'],
      ['entrypoints', 'list'],
      ['sni_rule', 'text'],
    ]),
    service_id: { to: 'service_id', form: 'text' },
  },
  headers: {
    request: { to: 'request', form: 'json' },
    response: { to: 'response', form: 'json' },
    custom_headers: { to: 'request', form: 'json' },
  },
  priority: { priority: { to: 'priority', form: 'json' }, router_priority: { to: 'priority', form: 'json' } },
  mtls: withPrefixedAliases('mtls_', [['enabled', 'json']]),
  mtlswhitelist: withPrefixedAliases('mtls_', [
    ['rules', 'json'],
    ['request_headers', 'json'],
    ['reject_message', 'text'],
    ['reject_code', 'json'],
    ['refresh_interval', 'interval'],
    ['external_data', 'json'],
  ]),
  external: { middleware_name: { to: 'name', form: 'text' } },
};

/** JSON text → value when it parses; anything else stays as sent (the schema then names the problem). */
function fromJsonText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return value;
  }
}

const commaList = (text: string): string[] =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');

function convert(form: Form, value: unknown): unknown {
  switch (form) {
    case 'list':
      return typeof value === 'string' ? (value.trim() === '' ? null : commaList(value)) : value;
    case 'domains':
      return typeof value === 'string'
        ? value.trim() === ''
          ? null
          : commaList(value).map((main) => ({ main }))
        : value;
    case 'text':
      // the old client sends "" for "not set"
      return value === '' ? null : value;
    case 'interval':
      return typeof value === 'string' && /^\s*[0-9]+\s*$/.test(value) ? Number(value) : value === '' ? null : value;
    case 'json':
      return fromJsonText(value);
  }
}

/** The body with aliases mapped to canonical fields; fields without an alias pass unchanged. */
export function normalizeAliases(kind: BodyKind, body: Body): Body {
  const fields = FIELDS[kind];
  const out: Body = {};
  const canonical = new Set(Object.values(fields).map((f) => f.to));
  for (const [key, value] of Object.entries(body)) {
    // unknown fields are dropped by validation anyway; "__proto__" would replace out's prototype
    if (key === '__proto__') continue;
    const alias = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (!alias) {
      if (!Object.hasOwn(out, key)) out[key] = value;
      continue;
    }
    const isCanonical = key === alias.to;
    // an alias never overrides its canonical field
    if (!isCanonical && canonical.has(alias.to) && Object.hasOwn(body, alias.to)) continue;
    out[alias.to] = convert(alias.form, value);
  }
  return out;
}

/** A `preValidation` hook applying normalizeAliases to JSON object bodies. */
export function aliasHook(kind: BodyKind) {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body;
    if (typeof body === 'object' && body !== null && !Array.isArray(body))
      request.body = normalizeAliases(kind, body as Body);
  };
}
