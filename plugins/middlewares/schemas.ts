/** TypeBox schemas of the middlewares group: stored file, request bodies, queries, responses (API.md §4.2). */
import { Type, type Static } from '@sinclair/typebox';
import {
  Description,
  ErrorResponses,
  IdParams,
  JsonObject,
  NoBody,
  Paging,
  QueryBool,
  Slug,
} from '../../model/schemas.ts';

/** Middleware types the file and HTTP providers accept (TCP middlewares are not supported). */
export const MIDDLEWARE_TYPES = [
  'addPrefix',
  'basicAuth',
  'buffering',
  'chain',
  'circuitBreaker',
  'compress',
  'contentType',
  'digestAuth',
  'errors',
  'forwardAuth',
  'grpcWeb',
  'headers',
  'ipAllowList',
  'ipWhiteList',
  'inFlightReq',
  'passTLSClientCert',
  'plugin',
  'rateLimit',
  'redirectRegex',
  'redirectScheme',
  'replacePath',
  'replacePathRegex',
  'retry',
  'stripPrefix',
  'stripPrefixRegex',
] as const;
export type MiddlewareType = (typeof MIDDLEWARE_TYPES)[number];

export const MiddlewareTypeSchema = Type.Union(
  MIDDLEWARE_TYPES.map((t) => Type.Literal(t)),
  { description: 'Traefik middleware type (case-sensitive)' },
);

/** Content of `data/middlewares/<id>.yaml` (without id and timestamps). */
export const MiddlewareFile = Type.Object({
  name: Type.String({ minLength: 1 }),
  type: MiddlewareTypeSchema,
  config: JsonObject,
  description: Type.Optional(Description),
});
export type MiddlewareData = Static<typeof MiddlewareFile>;

const writable = {
  name: Type.String({ minLength: 1, description: '1–100 characters after trimming; unique case-insensitively' }),
  type: MiddlewareTypeSchema,
  config: Type.Record(Type.String(), Type.Unknown(), {
    description: 'body under the type key in Traefik, validated against its definition in the Traefik JSON Schema',
  }),
  description: Type.Optional(Description),
};

/** POST body; unknown top-level fields are dropped. */
export const MiddlewareCreate = Type.Object({ id: Type.Optional(Slug), ...writable }, { additionalProperties: false });
export type MiddlewareCreateBody = Static<typeof MiddlewareCreate>;

/** PUT body: full replace; `id`, if sent, must equal the path id. */
export const MiddlewareReplace = Type.Object(
  { id: Type.Optional(Type.String()), ...writable },
  { additionalProperties: false },
);
export type MiddlewareReplaceBody = Static<typeof MiddlewareReplace>;

export const Middleware = Type.Object(
  {
    id: Slug,
    name: Type.String(),
    type: MiddlewareTypeSchema,
    config: JsonObject,
    description: Type.String(),
    used_by: Type.Array(Type.String(), { description: 'API paths of resources and chains referencing it' }),
    warnings: Type.Array(Type.String()),
    created_at: Type.String(),
    updated_at: Type.String(),
    etag: Type.String(),
  },
  { additionalProperties: false },
);
export type MiddlewareView = Static<typeof Middleware>;

export const MiddlewareListQuery = Type.Object({
  type: Type.Optional(MiddlewareTypeSchema),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'case-insensitive substring of id or name' })),
  ...Paging,
});
export type MiddlewareListFilter = Static<typeof MiddlewareListQuery>;

export const MiddlewareDeleteQuery = Type.Object({ force: Type.Optional(QueryBool) });

const Empty = NoBody;
const tags = ['middlewares'];

export const listSchema = {
  tags,
  summary: 'List middlewares',
  querystring: MiddlewareListQuery,
  response: { 200: Type.Array(Middleware), ...ErrorResponses },
};
export const createSchema = {
  tags,
  summary: 'Create a middleware',
  body: MiddlewareCreate,
  response: { 201: Middleware, ...ErrorResponses },
};
export const getSchema = {
  tags,
  summary: 'Read one middleware',
  params: IdParams,
  response: { 200: Middleware, 304: Empty, ...ErrorResponses },
};
export const replaceSchema = {
  tags,
  summary: 'Replace a middleware',
  params: IdParams,
  body: MiddlewareReplace,
  response: { 200: Middleware, ...ErrorResponses },
};
export const deleteSchema = {
  tags,
  summary: 'Delete a middleware',
  params: IdParams,
  querystring: MiddlewareDeleteQuery,
  response: { 204: Empty, ...ErrorResponses },
};
