/** TypeBox schemas of the mTLS group: stored files, request bodies, queries, responses (API.md §4.8). */
import { Type, type Static } from '@sinclair/typebox';
import {
  ErrorBody,
  ErrorResponses,
  IdParams,
  JsonObject,
  NoBody,
  Paging,
  QueryBool,
  Slug,
} from '../../model/schemas.ts';
import { GoInterval, MtlsRule, Nullable } from '../../model/resource-config.ts';

const Timestamp = Type.String({ description: 'ISO-8601 UTC' });
const Hex = Type.String({ pattern: '^[0-9a-f]+$', description: 'lower-case hex' });
const KeySize = Type.Union([Type.Literal(2048), Type.Literal(3072), Type.Literal(4096)], {
  description: 'RSA key size in bits',
});

// ---- MiddlewareConfig (global settings of the mtlswhitelist plugin middleware) ----

const Rules = Type.Array(MtlsRule, { maxItems: 1000 });
// header names are checked in code: a key pattern here would make Ajv drop bad names silently
const RequestHeaders = Type.Record(Type.String(), Type.String({ maxLength: 8192 }), {
  maxProperties: 100,
  description: 'header name → template',
});
const RejectMessage = Type.String({ maxLength: 1000 });
const RejectCode = Type.Integer({ minimum: 400, maximum: 599 });
const Interval = GoInterval;

/** PUT body (full replace): absent or null fields take their defaults; JSON text is parsed before validation. */
export const MiddlewareConfigBody = Type.Object(
  {
    rules: Type.Optional(Nullable(Rules)),
    request_headers: Type.Optional(Nullable(RequestHeaders)),
    reject_message: Type.Optional(Nullable(RejectMessage)),
    reject_code: Type.Optional(Nullable(RejectCode)),
    refresh_interval: Type.Optional(Nullable(Interval)),
    external_data: Type.Optional(Nullable(JsonObject)),
  },
  { additionalProperties: false },
);
export type MiddlewareConfigInput = Static<typeof MiddlewareConfigBody>;

export const MiddlewareConfigView = Type.Object(
  {
    rules: Rules,
    request_headers: RequestHeaders,
    reject_message: Type.String(),
    reject_code: Type.Integer(),
    refresh_interval: Type.String({ description: '"<n>s" or a Go duration' }),
    external_data: Nullable(JsonObject),
  },
  { additionalProperties: false },
);

// ---- Stored files ----

const RetiredSerial = Type.Object({ serial: Hex, revoked_at: Timestamp, expiry: Timestamp });

/** Content of `data/mtls/config.yaml`; every field optional (defaults filled on read). */
export const ConfigFile = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  middleware: Type.Optional(
    Type.Object({
      rules: Type.Optional(Rules),
      request_headers: Type.Optional(RequestHeaders),
      reject_message: Type.Optional(RejectMessage),
      reject_code: Type.Optional(RejectCode),
      refresh_interval: Type.Optional(Interval),
      external_data: Type.Optional(Nullable(JsonObject)),
    }),
  ),
  ca: Type.Optional(
    Nullable(
      Type.Object({
        subject: Type.String(),
        serial: Hex,
        key_size: Type.Integer(),
        not_before: Timestamp,
        expiry: Timestamp,
        fingerprint_sha256: Hex,
      }),
    ),
  ),
  crl: Type.Optional(
    Type.Object({
      number: Type.Integer({ minimum: 0 }),
      this_update: Nullable(Timestamp),
      next_update: Nullable(Timestamp),
      /** serials of deleted clients: listed in the CRL until they expire */
      retired: Type.Array(RetiredSerial),
    }),
  ),
  created_at: Type.Optional(Timestamp),
  updated_at: Type.Optional(Timestamp),
});
export type ConfigFileData = Static<typeof ConfigFile>;

/** Content of `data/mtls/clients/<id>.yaml` (metadata; the certificate and keys lie beside it). */
export const ClientFile = Type.Object({
  name: Type.String({ minLength: 1 }),
  subject: Type.String(),
  serial: Hex,
  fingerprint_sha256: Hex,
  not_before: Timestamp,
  expiry: Timestamp,
  revoked: Type.Boolean(),
  revoked_at: Nullable(Timestamp),
  legacy_p12: Type.Boolean(),
  key_size: Type.Integer(),
});
export type ClientData = Static<typeof ClientFile>;

// ---- Requests ----

export const CaBody = Type.Object(
  {
    common_name: Type.String({ minLength: 1, maxLength: 64 }),
    organization: Type.Optional(Type.String({ maxLength: 64 })),
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166 alpha-2, upper case' })),
    validity_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 7300 })),
    key_size: Type.Optional(KeySize),
  },
  { additionalProperties: false },
);
export type CaInput = Static<typeof CaBody>;

export const ClientBody = Type.Object(
  {
    id: Type.Optional(Slug),
    name: Type.String({ minLength: 1, description: '1–100 characters after trimming; unique case-insensitively' }),
    p12_password: Type.String({ minLength: 8, maxLength: 128, description: 'encrypts the PKCS#12; never stored' }),
    validity_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    key_size: Type.Optional(KeySize),
    legacy_p12: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ClientInput = Static<typeof ClientBody>;

export const ForceQuery = Type.Object({ force: Type.Optional(QueryBool) });
export const CrlQuery = Type.Object({ format: Type.Optional(Type.Union([Type.Literal('pem'), Type.Literal('der')])) });
export const ClientListQuery = Type.Object(Paging);

// ---- Responses ----

export const MtlsConfig = Type.Object(
  {
    enabled: Type.Boolean(),
    has_ca: Type.Boolean(),
    ca_subject: Nullable(Type.String()),
    ca_serial: Nullable(Type.String()),
    ca_key_size: Nullable(Type.Integer()),
    ca_not_before: Nullable(Timestamp),
    ca_expiry: Nullable(Timestamp),
    ca_fingerprint_sha256: Nullable(Type.String()),
    client_count: Type.Integer(),
    revoked_count: Type.Integer(),
    crl_next_update: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
    etag: Type.String(),
  },
  { additionalProperties: false },
);
export type MtlsConfigView = Static<typeof MtlsConfig>;

const clientFields = {
  id: Slug,
  name: Type.String(),
  subject: Type.String(),
  serial: Type.String({ description: 'hex' }),
  fingerprint_sha256: Type.String(),
  not_before: Timestamp,
  expiry: Timestamp,
  revoked: Type.Boolean(),
  revoked_at: Nullable(Timestamp),
  legacy_p12: Type.Boolean(),
  warnings: Type.Array(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  etag: Type.String(),
};
export const Client = Type.Object(clientFields, { additionalProperties: false });
export type ClientView = Static<typeof Client>;
export const ClientWithCert = Type.Object(
  { ...clientFields, cert: Type.String({ description: 'certificate PEM' }) },
  { additionalProperties: false },
);

export const PluginCheckView = Type.Object(
  {
    installed: Type.Boolean(),
    plugin_name: Type.Literal('mtlswhitelist'),
    key: Nullable(Type.String()),
    module_name: Nullable(Type.String()),
    version: Nullable(Type.String()),
    static_config_path: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

const Empty = NoBody;
const tags = ['mtls'];
const binary = (description: string) => ({ description, type: 'string', format: 'binary' });

export const schemas = {
  getConfig: {
    tags,
    summary: 'mTLS state and CA metadata',
    response: { 200: MtlsConfig, 304: Empty, ...ErrorResponses },
  },
  enable: { tags, summary: 'Enable mTLS globally (needs a CA)', response: { 200: MtlsConfig, ...ErrorResponses } },
  disable: {
    tags,
    summary: 'Disable mTLS globally (resource flags are kept)',
    response: { 200: MtlsConfig, ...ErrorResponses },
  },
  createCa: {
    tags,
    summary: 'Create (or with force, replace) the CA',
    body: CaBody,
    querystring: ForceQuery,
    response: { 201: MtlsConfig, ...ErrorResponses },
  },
  deleteCa: {
    tags,
    summary: 'Delete the CA and the CRL; disables mTLS',
    querystring: ForceQuery,
    response: { 204: Empty, ...ErrorResponses },
  },
  listClients: {
    tags,
    summary: 'Client certificates, newest first',
    querystring: ClientListQuery,
    response: { 200: Type.Array(Client), ...ErrorResponses },
  },
  createClient: {
    tags,
    summary: 'Issue a client certificate and its PKCS#12',
    body: ClientBody,
    response: { 201: Client, ...ErrorResponses },
  },
  getClient: {
    tags,
    summary: 'One client certificate, with its PEM',
    params: IdParams,
    response: { 200: ClientWithCert, 304: Empty, ...ErrorResponses },
  },
  download: {
    tags,
    summary: 'The client PKCS#12 (application/x-pkcs12)',
    params: IdParams,
    response: { 200: binary('PKCS#12 file'), ...ErrorResponses },
  },
  revoke: {
    tags,
    summary: 'Revoke a client certificate (re-signs the CRL)',
    params: IdParams,
    response: { 200: Client, ...ErrorResponses },
  },
  deleteClient: {
    tags,
    summary: 'Delete a client certificate (revoked first; its serial stays in the CRL until expiry)',
    params: IdParams,
    response: { 204: Empty, ...ErrorResponses },
  },
  pluginCheck: {
    tags,
    summary: 'Is the mtlswhitelist Traefik plugin in the static config?',
    response: { 200: PluginCheckView, ...ErrorResponses },
  },
  getMiddleware: {
    tags,
    summary: 'Global mtlswhitelist middleware settings',
    response: { 200: MiddlewareConfigView, ...ErrorResponses },
  },
  putMiddleware: {
    tags,
    summary: 'Replace the global mtlswhitelist middleware settings',
    body: MiddlewareConfigBody,
    response: { 200: MiddlewareConfigView, ...ErrorResponses },
  },
  crl: {
    tags,
    summary: 'The current CRL (PEM or DER)',
    querystring: CrlQuery,
    response: { 200: binary('application/x-pem-file or application/pkix-crl'), ...ErrorResponses },
  },
  verify: {
    tags,
    summary: 'forwardAuth target: 403 for a revoked certificate of our CA, else 200',
    response: { 200: Empty, 403: ErrorBody },
  },
};
