/** TypeBox schemas of the data source group: datasources.yaml, request bodies, responses (API.md §4.5). */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, ErrorResponses, NoBody, Paging, Slug } from '../../model/schemas.ts';

/** What clients send in `basic_auth.password` to mean "keep the stored password". */
export const PASSWORD_MASK = '••••••••';

/** Defaults of API.md §4.5 for fields a PUT or a hand edit leaves out. */
export const DEFAULT_POLL_INTERVAL_S = 5;
export const DEFAULT_TIMEOUT_MS = 5000;

/** `type` of a data source. */
export const SourceTypeSchema = Type.Union([Type.Literal('pangolin'), Type.Literal('traefik')], {
  description: 'pangolin (Pangolin HTTP-provider endpoint) or traefik (Traefik API)',
});

const PollInterval = Type.Integer({ minimum: 1, maximum: 3600, description: 'seconds between polls while active' });
const Timeout = Type.Integer({ minimum: 100, maximum: 60000, description: 'per-request timeout in ms' });
const Username = Type.String({ minLength: 1, maxLength: 256 });
const Password = Type.String({ maxLength: 1024 });

// ---- datasources.yaml ----

/** One entry of `sources` in datasources.yaml; hand edits may omit the fields that have defaults. */
export const SourceEntrySchema = Type.Object({
  type: SourceTypeSchema,
  // the API checks URLs thoroughly; a hand edit gets the essential rule (http/https, no query, fragment or blank)
  url: Type.String({ pattern: '^[hH][tT][tT][pP][sS]?://[^?#\\s]+$', maxLength: 2048 }),
  skip_tls_verify: Type.Optional(Type.Boolean()),
  basic_auth: Type.Optional(Type.Union([Type.Object({ username: Username, password: Password }), Type.Null()])),
  poll_interval_s: Type.Optional(PollInterval),
  timeout_ms: Type.Optional(Timeout),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
});

/**
 * The whole file. Source names are not constrained here: the store's cleaning would silently drop
 * (and a later write delete) an entry with a bad name, so the service skips and reports it instead.
 */
export const DataSourcesFileSchema = Type.Object({
  active: Type.String(),
  sources: Type.Record(Type.String(), SourceEntrySchema),
});

/** A source's settings as stored, defaults filled in (timestamps stay absent when a hand edit left them out). */
export interface StoredSource {
  type: 'pangolin' | 'traefik';
  url: string;
  skip_tls_verify: boolean;
  basic_auth: { username: string; password: string } | null;
  poll_interval_s: number;
  timeout_ms: number;
  created_at?: string;
  updated_at?: string;
}

export interface DataSourcesFile {
  active: string;
  sources: Record<string, StoredSource>;
}

// ---- request bodies ----

const BasicAuthWrite = Type.Object(
  {
    username: Type.Optional(Username),
    password: Type.Optional(
      Type.String({ maxLength: 1024, description: `omitted or "${PASSWORD_MASK}" keeps the stored password` }),
    ),
  },
  { additionalProperties: false },
);
const BasicAuthField = Type.Union([BasicAuthWrite, Type.Null()], { description: 'null removes the credentials' });

/** Writable DataSource fields (PUT merges them over the stored ones; the test route over them unsaved). */
export const DataSourceWrite = Type.Object(
  {
    type: Type.Optional(SourceTypeSchema),
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'absolute http/https URL without query or fragment; a trailing / is removed',
      }),
    ),
    skip_tls_verify: Type.Optional(Type.Boolean()),
    basic_auth: Type.Optional(BasicAuthField),
    basicAuth: Type.Optional(BasicAuthField),
    poll_interval_s: Type.Optional(PollInterval),
    timeout_ms: Type.Optional(Timeout),
  },
  { additionalProperties: false },
);
export type DataSourceWriteBody = Static<typeof DataSourceWrite>;

/** Body of PUT /api/datasource/active. */
export const SetActiveBody = Type.Object(
  { name: Type.String({ ...Slug, description: 'a source name, or none: data source mode none (own objects only)' }) },
  { additionalProperties: false },
);

/** `:name` is a slug (API.md §2.8); anything else answers 422 before reaching the service. */
export const NameParams = Type.Object({ name: Slug });

// ---- responses ----

const LastSyncSchema = Type.Object(
  {
    at: Type.String(),
    ok: Type.Boolean(),
    error: Type.Union([Type.String(), Type.Null()]),
    routers: Type.Union([Type.Integer(), Type.Null()]),
    empty_streak: Type.Integer(),
  },
  { additionalProperties: false },
);

/** The API object. It has no password field, so the serializer cannot emit one. */
export const DataSource = Type.Object(
  {
    name: Slug,
    type: SourceTypeSchema,
    url: Type.String(),
    skip_tls_verify: Type.Boolean(),
    basic_auth: Type.Union([
      Type.Object({ username: Type.String(), password_set: Type.Boolean() }, { additionalProperties: false }),
      Type.Null(),
    ]),
    poll_interval_s: Type.Integer(),
    timeout_ms: Type.Integer(),
    active: Type.Boolean(),
    last_sync: Type.Union([LastSyncSchema, Type.Null()], {
      description: 'latest poll of this source (only the active one is polled)',
    }),
    created_at: Type.String(),
    updated_at: Type.String(),
    etag: Type.String(),
  },
  { additionalProperties: false },
);
export type DataSourceView = Static<typeof DataSource>;

/** Body of POST /api/datasource/:name/test, whatever the probe's outcome. */
export const ProbeResultSchema = Type.Object(
  {
    ok: Type.Boolean(),
    latency_ms: Type.Integer(),
    routers: Type.Union([Type.Integer(), Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

// ---- route schemas (request and response per status code; OpenAPI is generated from them) ----

const Empty = NoBody;
const tags = ['datasource'];
const ListQuery = Type.Object({ ...Paging });

export const listSchema = {
  tags,
  summary: 'List data sources, by name',
  querystring: ListQuery,
  response: { 200: Type.Array(DataSource), 422: ErrorBody },
};
export const getActiveSchema = {
  tags,
  summary: 'Read the active data source',
  response: { 200: DataSource, 304: Empty, 404: ErrorBody },
};
export const setActiveSchema = {
  tags,
  summary: 'Switch the active data source (a sync starts at once); name none: mode none, 204',
  body: SetActiveBody,
  response: { 200: DataSource, 204: Empty, ...ErrorResponses },
};
export const getSchema = {
  tags,
  summary: 'Read one data source',
  params: NameParams,
  response: { 200: DataSource, 304: Empty, ...ErrorResponses },
};
export const putSchema = {
  tags,
  summary: 'Create or update a data source (omitted fields keep their stored values)',
  params: NameParams,
  body: DataSourceWrite,
  response: { 200: DataSource, 201: DataSource, ...ErrorResponses },
};
export const deleteSchema = {
  tags,
  summary: 'Delete a data source (not the active one)',
  params: NameParams,
  response: { 204: Empty, ...ErrorResponses },
};
export const testSchema = {
  tags,
  summary: 'Probe a data source; the body is merged over the stored settings and not saved',
  params: NameParams,
  body: DataSourceWrite,
  response: { 200: ProbeResultSchema, ...ErrorResponses },
};
