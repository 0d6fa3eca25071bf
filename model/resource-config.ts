/**
 * TypeBox schemas of the per-resource override sub-objects (API.md §4.4 Config table). The same
 * schemas validate PUT bodies and hand-edited `resources/<id>.yaml` files (§3.3), so every field is
 * optional: null or absent means "inherit the upstream value" and takes the default.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Slug } from './schemas.ts';
import { MAX_GO_DURATION_S } from '../core/formats.ts';

/** `T | null`; null is listed first so no validator ever tries to coerce it into T. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([Type.Null(), schema]);

export const ENTRYPOINT_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
// a DNS name of letters, digits and inner hyphens; `*.` allowed in front (wildcard certificates)
export const HOSTNAME_PATTERN =
  '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';
// Go's time.ParseDuration syntax ("300s", "1m30s", "1.5h"), or "0"
export const GO_DURATION_PATTERN = '^(0|([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$';
/** An interval Traefik reads into a Go time.Duration: a duration string, or whole seconds, both ≤ 2^63−1 ns. */
export const GoInterval = Type.Union(
  [
    Type.String({ pattern: GO_DURATION_PATTERN, format: 'go-duration', maxLength: 100 }),
    Type.Integer({ minimum: 0, maximum: MAX_GO_DURATION_S }),
  ],
  { description: `Go duration (at most 2562047h47m16.854775807s), or integer seconds (0–${MAX_GO_DURATION_S})` },
);
/** RFC 9110 token: the characters allowed in a header field name. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const EntryPoints = Type.Array(Type.String({ pattern: ENTRYPOINT_PATTERN }), { maxItems: 20 });
const Hostname = Type.String({ pattern: HOSTNAME_PATTERN, maxLength: 253 });
// names are checked in code (config-rules.ts): a key pattern here would make Ajv drop bad names silently
const HeaderMap = Type.Record(Type.String(), Type.String({ maxLength: 8192 }), { maxProperties: 100 });
const Name = Type.String({ minLength: 1, maxLength: 256 });

export const TlsDomainSchema = Type.Object(
  {
    main: Hostname,
    sans: Type.Optional(Type.Array(Hostname, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const HttpConfig = Type.Object(
  {
    entrypoints: Type.Optional(Nullable(EntryPoints)),
  },
  { additionalProperties: false, description: 'router entryPoints; [] or null inherits' },
);

export const TlsConfig = Type.Object(
  {
    cert_resolver: Type.Optional(Nullable(Name)),
    domains: Type.Optional(Nullable(Type.Array(TlsDomainSchema, { maxItems: 100 }))),
    options: Type.Optional(Nullable(Name)),
  },
  { additionalProperties: false },
);

export const TcpConfig = Type.Object(
  {
    enabled: Type.Optional(Nullable(Type.Boolean())),
    entrypoints: Type.Optional(Nullable(EntryPoints)),
    sni_rule: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 1024 }))),
    service_id: Type.Optional(Nullable(Slug)),
  },
  { additionalProperties: false },
);

export const HeadersConfig = Type.Object(
  {
    request: Type.Optional(Nullable(HeaderMap)),
    response: Type.Optional(Nullable(HeaderMap)),
  },
  { additionalProperties: false, description: 'header name → value; "" removes that header' },
);

export const PriorityConfig = Type.Object(
  {
    priority: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
  },
  { additionalProperties: false },
);

export const MtlsConfig = Type.Object(
  {
    enabled: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: false },
);

const RULE_TYPES = ['ipRange', 'header', 'allOf', 'anyOf', 'noneOf'] as const;
/** One rule of the mtlswhitelist plugin (its other fields depend on the type and pass through). */
export const MtlsRule = Type.Object(
  { type: Type.Union(RULE_TYPES.map((t) => Type.Literal(t))) },
  { additionalProperties: true },
);
export type MtlsRuleData = Static<typeof MtlsRule> & Record<string, unknown>;
const Rule = MtlsRule;

export const MtlsWhitelistConfig = Type.Object(
  {
    rules: Type.Optional(Nullable(Type.Array(Rule, { maxItems: 1000 }))),
    request_headers: Type.Optional(
      Nullable(Type.Record(Type.String(), Type.String({ maxLength: 8192 }), { maxProperties: 100 })),
    ),
    reject_message: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    reject_code: Type.Optional(Nullable(Type.Integer({ minimum: 400, maximum: 599 }))),
    refresh_interval: Type.Optional(Nullable(GoInterval)),
    external_data: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  },
  { additionalProperties: false, description: 'null fields take the global mtlswhitelist settings' },
);

/** Schema of each sub-object, by the name used in `PUT /api/resources/:id/config/<kind>`. */
export const CONFIG_SCHEMAS = {
  http: HttpConfig,
  tls: TlsConfig,
  tcp: TcpConfig,
  headers: HeadersConfig,
  priority: PriorityConfig,
  mtls: MtlsConfig,
  mtlswhitelist: MtlsWhitelistConfig,
} as const;
export type ConfigKind = keyof typeof CONFIG_SCHEMAS;
export const CONFIG_KINDS = Object.keys(CONFIG_SCHEMAS) as ConfigKind[];

/** `config` as a file may hold it: every sub-object optional. */
export const ConfigFile = Type.Object(
  {
    http: Type.Optional(HttpConfig),
    tls: Type.Optional(TlsConfig),
    tcp: Type.Optional(TcpConfig),
    headers: Type.Optional(HeadersConfig),
    priority: Type.Optional(PriorityConfig),
    mtls: Type.Optional(MtlsConfig),
    mtlswhitelist: Type.Optional(MtlsWhitelistConfig),
  },
  { additionalProperties: false },
);

export type ConfigBody<K extends ConfigKind> = Static<(typeof CONFIG_SCHEMAS)[K]>;
export type ConfigFileData = Static<typeof ConfigFile>;
