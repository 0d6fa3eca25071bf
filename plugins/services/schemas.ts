/** TypeBox schemas of the services group: stored file, request bodies, queries, responses (API.md §4.3). */
import { Type, type Static } from '@sinclair/typebox';
import { Description, ErrorResponses, IdParams, JsonObject, NoBody, Paging, Slug } from '../../model/schemas.ts';

export const SERVICE_TYPES = ['loadBalancer', 'weighted', 'mirroring', 'failover'] as const;
export const PROTOCOLS = ['http', 'tcp', 'udp'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export const ServiceTypeSchema = Type.Union(
  SERVICE_TYPES.map((t) => Type.Literal(t)),
  { description: 'tcp and udp allow loadBalancer and weighted only' },
);
export const ProtocolSchema = Type.Union(
  PROTOCOLS.map((p) => Type.Literal(p)),
  { description: 'section the service is emitted in' },
);
const SourceSchema = Type.Union([Type.Literal('manual'), Type.Literal('template'), Type.Literal('discovered')]);

/** Content of `data/services/<id>.yaml` (without id and timestamps); `source` tells manual from template. */
export const ServiceFile = Type.Object({
  name: Type.String({ minLength: 1 }),
  type: ServiceTypeSchema,
  protocol: Type.Optional(ProtocolSchema),
  config: JsonObject,
  description: Type.Optional(Description),
  source: Type.Optional(Type.Union([Type.Literal('manual'), Type.Literal('template')])),
});
export type ServiceData = Static<typeof ServiceFile>;

const writable = {
  name: Type.String({ minLength: 1, description: '1–100 characters after trimming; unique case-insensitively' }),
  type: ServiceTypeSchema,
  protocol: Type.Optional(ProtocolSchema),
  config: Type.Record(Type.String(), Type.Unknown(), {
    description: 'body under the type key, validated against the Traefik <protocol><Type>Service definition',
  }),
  description: Type.Optional(Description),
};

/** POST body; unknown top-level fields (including read-only ones) are dropped. */
export const ServiceCreate = Type.Object({ id: Type.Optional(Slug), ...writable }, { additionalProperties: false });
export type ServiceCreateBody = Static<typeof ServiceCreate>;

/** PUT body: full replace; `id`, if sent, must equal the path id. */
export const ServiceReplace = Type.Object(
  { id: Type.Optional(Type.String()), ...writable },
  { additionalProperties: false },
);
export type ServiceReplaceBody = Static<typeof ServiceReplace>;

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const Service = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: Type.String({
      description: 'loadBalancer, weighted, mirroring, failover (discovered services may show other Traefik types)',
    }),
    protocol: ProtocolSchema,
    config: JsonObject,
    description: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
    source: SourceSchema,
    provider: NullableString,
    upstream_name: NullableString,
    used_by: Type.Array(Type.String(), { description: 'API paths of services and resources referencing it' }),
    warnings: Type.Array(Type.String()),
    created_at: Type.String(),
    updated_at: Type.String(),
    etag: Type.String(),
  },
  { additionalProperties: false },
);
export type ServiceView = Static<typeof Service>;

export const ServiceListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('all')])),
  source: Type.Optional(SourceSchema),
  protocol: Type.Optional(ProtocolSchema),
  type: Type.Optional(Type.String({ pattern: '^[A-Za-z]{1,40}$' })),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'case-insensitive substring of id or name' })),
  ...Paging,
});
export type ServiceListFilter = Static<typeof ServiceListQuery>;

const Empty = NoBody;
const tags = ['services'];

export const listSchema = {
  tags,
  summary: 'List services (manual, template and discovered)',
  querystring: ServiceListQuery,
  response: { 200: Type.Array(Service), ...ErrorResponses },
};
export const createSchema = {
  tags,
  summary: 'Create a service',
  body: ServiceCreate,
  response: { 201: Service, ...ErrorResponses },
};
export const getSchema = {
  tags,
  summary: 'Read one service',
  params: IdParams,
  response: { 200: Service, 304: Empty, ...ErrorResponses },
};
export const replaceSchema = {
  tags,
  summary: 'Replace a service',
  params: IdParams,
  body: ServiceReplace,
  response: { 200: Service, ...ErrorResponses },
};
export const deleteSchema = {
  tags,
  summary: 'Delete a service',
  params: IdParams,
  response: { 204: Empty, ...ErrorResponses },
};
