/** TypeBox schemas of the resources group: stored file, request bodies, queries, responses (API.md §4.4). */
import { Type, type Static } from '@sinclair/typebox';
import { Service } from '../services/schemas.ts';
import { ErrorResponses, IdParams, NoBody, Paging, Slug } from '../../model/schemas.ts';
import { CONFIG_SCHEMAS, ConfigFile, Nullable, TlsDomainSchema, type ConfigKind } from '../../model/resource-config.ts';
import { LiveState, ResourceLiveSchema } from '../../model/live/schemas.ts';

const SourceKind = Type.Union([Type.Literal('pangolin'), Type.Literal('traefik'), Type.Literal('local')], {
  description: 'pangolin or traefik: discovered from that kind of data source; local: our own (API.md §4.24)',
});
const Status = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);
export const EXTERNAL_NAME_PATTERN = '^[A-Za-z0-9._-]+(@[A-Za-z0-9._-]+){0,1}$';
const PROVIDER_PATTERN = '^[A-Za-z0-9._-]+$';

/** Assignment priority: 1–10000, higher runs first; 0, null or absent = 100. */
const AssignmentPriority = Type.Integer({
  minimum: 0,
  maximum: 10000,
  description: '1–10000, higher runs first; 0 or absent = 100',
});

const StoredTls = Type.Object({
  cert_resolver: Nullable(Type.String()),
  domains: Nullable(Type.Array(Type.Object({ main: Type.String(), sans: Type.Optional(Type.Array(Type.String())) }))),
  options: Nullable(Type.String()),
});

/** A `PathPrefix` value: starts with `/`, no blanks, quotes or backticks. */
const PathPrefix = Type.String({ pattern: '^/[^\\s`"]*$', maxLength: 1024 });
// host names of Host() matchers: DNS names, no wildcard (Traefik's Host() matches one name exactly)
const HOST_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';

/**
 * Content of `data/resources/<id>.yaml` (without id and timestamps). Discovered fields are optional
 * so a file may hold overrides only (API.md §4.9 example); unsafe integer priorities are stored as
 * digit strings because YAML readers would round them.
 */
export const ResourceFile = Type.Object(
  {
    name: Type.Optional(Type.String()),
    router: Type.Optional(Type.String()),
    source: Type.Optional(SourceKind),
    status: Type.Optional(Status),
    missing_since: Type.Optional(Nullable(Type.String())),
    rule: Type.Optional(Type.String()),
    host: Type.Optional(Nullable(Type.String())),
    hosts: Type.Optional(Type.Array(Type.String())),
    entrypoints: Type.Optional(Type.Array(Type.String())),
    tls: Type.Optional(Nullable(StoredTls)),
    priority: Type.Optional(Nullable(Type.Union([Type.Integer(), Type.String({ pattern: '^-?[0-9]+$' })]))),
    upstream_service: Type.Optional(Type.String()),
    upstream_middlewares: Type.Optional(Type.Array(Type.String())),
    middlewares: Type.Optional(
      Type.Array(Type.Object({ id: Slug, priority: Type.Optional(Nullable(AssignmentPriority)) })),
    ),
    external_middlewares: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ pattern: EXTERNAL_NAME_PATTERN }),
          priority: Type.Optional(Nullable(AssignmentPriority)),
          provider: Type.Optional(Nullable(Type.String({ pattern: PROVIDER_PATTERN }))),
        }),
      ),
    ),
    service_id: Type.Optional(Nullable(Slug)),
    config: Type.Optional(ConfigFile),
    path_prefix: Type.Optional(Nullable(PathPrefix)),
  },
  { additionalProperties: false },
);
export type ResourceFileData = Static<typeof ResourceFile>;

// ---- request bodies ----

export const AssignBody = Type.Object(
  {
    middleware_id: Slug,
    priority: Type.Optional(Nullable(AssignmentPriority)),
  },
  { additionalProperties: false },
);
export type AssignBodyType = Static<typeof AssignBody>;

export const BulkAssignBody = Type.Object(
  {
    middlewares: Type.Array(AssignBody, { minItems: 1, maxItems: 100 }),
    replace: Type.Optional(
      Type.Boolean({ description: 'true: the list replaces every assignment; false (default): upsert each' }),
    ),
  },
  { additionalProperties: false },
);
export type BulkAssignBodyType = Static<typeof BulkAssignBody>;

export const ExternalBody = Type.Object(
  {
    name: Type.String({
      pattern: EXTERNAL_NAME_PATTERN,
      maxLength: 256,
      description: 'e.g. crowdsec@file (alias: middleware_name)',
    }),
    priority: Type.Optional(Nullable(AssignmentPriority)),
    provider: Type.Optional(Nullable(Type.String({ pattern: PROVIDER_PATTERN, maxLength: 64 }))),
  },
  { additionalProperties: false },
);
export type ExternalBodyType = Static<typeof ExternalBody>;

export const ServiceBody = Type.Object({ service_id: Slug }, { additionalProperties: false });

/** POST /api/resources and PUT /api/resources/:id: an own resource (API.md §4.24). */
export const LocalResourceBody = Type.Object(
  {
    id: Type.Optional(Slug),
    name: Type.String({ minLength: 1, maxLength: 200, description: '1–100 characters after trimming' }),
    hosts: Type.Optional(
      Type.Array(Type.String({ pattern: HOST_PATTERN, maxLength: 253 }), {
        minItems: 1,
        maxItems: 20,
        description: 'rule = Host(`a`) || Host(`b`) …; give hosts or rule',
      }),
    ),
    rule: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, description: 'a Traefik rule; give hosts or rule' }),
    ),
    path_prefix: Type.Optional(Nullable(PathPrefix)),
    entrypoints: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }), {
        minItems: 1,
        maxItems: 20,
        description: 'default ["websecure"]',
      }),
    ),
    service_id: Type.Optional(Slug),
    servers: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
        minItems: 1,
        maxItems: 100,
        description: 'server URLs: creates (or, on PUT, replaces) the loadBalancer service <id>-service',
      }),
    ),
    tls: Type.Optional(
      Nullable(
        Type.Object(
          {
            cert_resolver: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 256 }))),
            domains: Type.Optional(Nullable(Type.Array(TlsDomainSchema, { maxItems: 100 }))),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    priority: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
    middlewares: Type.Optional(Type.Array(AssignBody, { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type LocalResourceBodyType = Static<typeof LocalResourceBody>;

// ---- responses ----

const Assigned = Type.Object({ id: Type.String(), priority: Type.Integer() });
const External = Type.Object({ name: Type.String(), priority: Type.Integer(), provider: Nullable(Type.String()) });

export const Resource = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'upstream router key without @provider' }),
  router: Type.String({ description: 'full key, e.g. 1-app-router@http' }),
  source: SourceKind,
  status: Status,
  missing_since: Nullable(Type.String()),
  rule: Type.String(),
  host: Nullable(Type.String()),
  hosts: Type.Array(Type.String()),
  entrypoints: Type.Array(Type.String()),
  tls: Nullable(StoredTls),
  // a BigInt above 2^53−1 is written digit for digit by the group's serializer (codecs.ts)
  priority: Nullable(
    Type.Unsafe<number | bigint>(
      Type.Integer({ description: 'upstream priority, exact: may exceed 2^53−1 (written digit for digit)' }),
    ),
  ),
  upstream_service: Type.String(),
  upstream_middlewares: Type.Array(Type.String()),
  middlewares: Type.Array(Assigned, { description: 'priority desc, then id' }),
  external_middlewares: Type.Array(External),
  service_id: Nullable(Type.String()),
  config: Type.Object({ ...CONFIG_SCHEMAS }, { description: 'every key present with its defaults' }),
  path_prefix: Nullable(Type.String({ description: 'local resources built from hosts: the PathPrefix of the rule' })),
  effective_middlewares: Type.Array(Type.String()),
  effective_service: Type.String(),
  emitted: Type.Boolean(),
  warnings: Type.Array(Type.String()),
  live: ResourceLiveSchema,
  created_at: Type.String(),
  updated_at: Type.String(),
  etag: Type.String(),
});

export const ResourceListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('all')])),
  source: Type.Optional(SourceKind),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'case-insensitive substring of id, name or host' })),
  live: Type.Optional(LiveState),
  ...Paging,
});
export type ResourceListFilter = Static<typeof ResourceListQuery>;

export const MiddlewareParams = Type.Object({ id: Slug, middlewareId: Slug });
export const ExternalParams = Type.Object({
  id: Slug,
  name: Type.String({ pattern: EXTERNAL_NAME_PATTERN, maxLength: 256 }),
});

const Empty = NoBody;
const tags = ['resources'];
const one = { 200: Resource, ...ErrorResponses };

export const listSchema = {
  tags,
  summary: 'List resources',
  querystring: ResourceListQuery,
  response: { 200: Type.Array(Resource), ...ErrorResponses },
};
export const getSchema = {
  tags,
  summary: 'Read one resource',
  params: IdParams,
  response: { 200: Resource, 304: Empty, ...ErrorResponses },
};
export const createSchema = {
  tags,
  summary: 'Create an own resource (source local)',
  body: LocalResourceBody,
  response: { 201: Resource, ...ErrorResponses },
};
export const replaceSchema = {
  tags,
  summary: 'Replace an own resource (source local)',
  params: IdParams,
  body: LocalResourceBody,
  response: one,
};
export const deleteSchema = {
  tags,
  summary: 'Delete a disabled or local resource',
  params: IdParams,
  response: { 204: Empty, ...ErrorResponses },
};
export const assignSchema = {
  tags,
  summary: 'Assign a middleware (upsert)',
  params: IdParams,
  body: AssignBody,
  response: one,
};
export const bulkSchema = {
  tags,
  summary: 'Assign several middlewares (all or nothing)',
  params: IdParams,
  body: BulkAssignBody,
  response: one,
};
export const unassignSchema = {
  tags,
  summary: 'Remove a middleware assignment',
  params: MiddlewareParams,
  response: { 204: Empty, ...ErrorResponses },
};
export const externalListSchema = {
  tags,
  summary: 'List external middleware references',
  params: IdParams,
  response: { 200: Type.Array(External), ...ErrorResponses },
};
export const externalUpsertSchema = {
  tags,
  summary: 'Add or change an external middleware reference',
  params: IdParams,
  body: ExternalBody,
  response: one,
};
export const externalDeleteSchema = {
  tags,
  summary: 'Remove an external middleware reference',
  params: ExternalParams,
  response: { 204: Empty, ...ErrorResponses },
};
export const serviceGetSchema = {
  tags,
  summary: 'Read the assigned service',
  params: IdParams,
  response: {
    200: Type.Object({ resource_id: Type.String(), service_id: Type.String(), service: Nullable(Service) }),
    ...ErrorResponses,
  },
};
export const serviceAssignSchema = {
  tags,
  summary: 'Assign a service',
  params: IdParams,
  body: ServiceBody,
  response: one,
};
export const serviceRemoveSchema = {
  tags,
  summary: 'Remove the service assignment',
  params: IdParams,
  response: { 204: Empty, ...ErrorResponses },
};

/** Route schema of `PUT /api/resources/:id/config/<kind>`. */
export function configSchema(kind: ConfigKind) {
  return { tags, summary: `Replace the ${kind} override`, params: IdParams, body: CONFIG_SCHEMAS[kind], response: one };
}
