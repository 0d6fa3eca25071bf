/** TypeBox schemas of the Proxy explorer (API.md §4.7): queries and the responses per status code. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody, JsonObject, Paging } from '../../model/schemas.ts';

const tags = ['proxy'];
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A Traefik API object with every field Traefik sends (status, error, using, usedBy, serverStatus, provider, type, config). */
const TraefikObject = JsonObject;
const TraefikList = Type.Array(TraefikObject);

export const PartErrorSchema = Type.Object(
  {
    endpoint: Type.String({ description: 'Traefik API path, e.g. /api/tcp/routers' }),
    message: Type.String(),
  },
  { additionalProperties: false },
);

export const VersionBody = Type.Object(
  {
    version: Type.String({ description: 'Traefik `Version`' }),
    codename: Type.Union([Type.String(), Type.Null()], { description: 'Traefik `Codename`' }),
    start_date: Type.Union([Type.String(), Type.Null()], { description: 'Traefik `startDate`' }),
  },
  { additionalProperties: false },
);
export type VersionView = Static<typeof VersionBody>;

/** `type=all`: the three lists; a failed one is `[]` and named in `errors`. */
export const AllLists = Type.Object(
  {
    http: TraefikList,
    tcp: TraefikList,
    udp: TraefikList,
    errors: Type.Array(PartErrorSchema),
  },
  { additionalProperties: false },
);

/** GET /api/proxy/data: everything at once; a failed part is null and named in `errors`. */
export const DataBody = Type.Object(
  {
    overview: Nullable(TraefikObject),
    version: Nullable(VersionBody),
    entrypoints: Nullable(TraefikList),
    http: Type.Object({
      routers: Nullable(TraefikList),
      services: Nullable(TraefikList),
      middlewares: Nullable(TraefikList),
    }),
    tcp: Type.Object({
      routers: Nullable(TraefikList),
      services: Nullable(TraefikList),
      middlewares: Nullable(TraefikList),
    }),
    udp: Type.Object({ routers: Nullable(TraefikList), services: Nullable(TraefikList) }),
    errors: Type.Array(PartErrorSchema),
  },
  { additionalProperties: false },
);

export const LIST_TYPES = ['http', 'tcp', 'udp', 'all'] as const;

export const ListQuery = Type.Object({
  type: Type.Optional(
    Type.Union(
      LIST_TYPES.map((type) => Type.Literal(type)),
      { description: 'http (default), tcp, udp or all' },
    ),
  ),
  search: Type.Optional(
    Type.String({
      maxLength: 256,
      description: 'passed to Traefik (substring of the name; routers: also of the rule)',
    }),
  ),
  provider: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'exact provider, e.g. http, file, docker' }),
  ),
  ...Paging,
});
export type ListQueryType = Static<typeof ListQuery>;

const PagingQuery = Type.Object({ ...Paging });
const Errors = { 502: ErrorBody, 503: ErrorBody } as const;

export const overviewSchema = {
  tags,
  summary: "Traefik's /api/overview, unchanged",
  response: { 200: TraefikObject, ...Errors },
};
export const versionSchema = {
  tags,
  summary: 'Traefik version, codename and start date',
  response: { 200: VersionBody, ...Errors },
};
export const entrypointsSchema = {
  tags,
  summary: 'Traefik entry points as Traefik returns them',
  querystring: PagingQuery,
  response: { 200: TraefikList, 422: ErrorBody, ...Errors },
};

/** GET /api/proxy/routers|services|middlewares. */
export const listSchema = (kind: string) => ({
  tags,
  summary: `Traefik ${kind}: one protocol as an array, or type=all as {http, tcp, udp, errors} (206 when some failed)`,
  querystring: ListQuery,
  response: { 200: Type.Union([TraefikList, AllLists]), 206: AllLists, 422: ErrorBody, ...Errors },
});

export const dataSchema = {
  tags,
  summary: 'Overview, version, entry points and every list at once (206 when a part failed)',
  response: { 200: DataBody, 206: DataBody, ...Errors },
};
