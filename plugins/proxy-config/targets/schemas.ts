/** TypeBox schemas of provider targets: stored file, request bodies and the API view (docs/API.md "Provider targets"). */
import { Type, type Static } from '@sinclair/typebox';
import { Description, ErrorResponses, IdParams, NoBody, Paging, Slug } from '../../../model/schemas.ts';

const Hosts = Type.Array(Type.String({ maxLength: 253 }), {
  maxItems: 1000,
  description: 'host globs: `*` = any run inside one label, `**` (whole label) = one or more labels',
});
const Ids = (what: string) => Type.Array(Type.String({ maxLength: 63 }), { maxItems: 10_000, description: what });

const Selection = Type.Object(
  {
    hosts: Type.Optional(Hosts),
    resources: Type.Optional(Ids('resource ids')),
  },
  { additionalProperties: false },
);
export type TargetSelection = Static<typeof Selection>;

const EntrypointRenames = Type.Record(Type.String(), Type.String(), {
  description: 'entry point renames, `{<name in the default document>: <name on this Traefik>}`',
});
const ExtraMiddlewares = Ids('ids of stored middlewares appended to every HTTP router of the target');
const TraefikVersionField = Type.String({
  pattern: '^v?[0-9]+\\.[0-9]+(\\.[0-9]+)?([-+].*)?$',
  maxLength: 50,
  description:
    "version of the Traefik polling this target (e.g. 3.5.3): its document holds no key that version cannot decode (API.md §4.9 G14); absent: the default document's version",
});

const fields = {
  name: Type.String({ minLength: 1, description: '1–100 characters after trimming; unique case-insensitively' }),
  description: Type.Optional(Description),
  include: Type.Optional(Selection),
  exclude: Type.Optional(Selection),
  entrypoints: Type.Optional(EntrypointRenames),
  middlewares: Type.Optional(ExtraMiddlewares),
  traefik_version: Type.Optional(TraefikVersionField),
};

/** Content of `data/targets/<id>.yaml` (without id and timestamps). */
export const TargetFile = Type.Object(fields, { additionalProperties: false });
export type TargetData = Static<typeof TargetFile>;

/** POST body; unknown top-level fields are dropped. */
export const TargetCreate = Type.Object({ id: Type.Optional(Slug), ...fields }, { additionalProperties: false });
export type TargetCreateBody = Static<typeof TargetCreate>;

/** PUT body: full replace; `id`, if sent, must equal the path id. */
export const TargetReplace = Type.Object(
  { id: Type.Optional(Type.String()), ...fields },
  { additionalProperties: false },
);
export type TargetReplaceBody = Static<typeof TargetReplace>;

const FullSelection = Type.Object({ hosts: Type.Array(Type.String()), resources: Type.Array(Type.String()) });

export const Target = Type.Object(
  {
    id: Slug,
    name: Type.String(),
    description: Type.String(),
    include: Type.Union([FullSelection, Type.Null()], { description: 'null: every resource' }),
    exclude: FullSelection,
    entrypoints: Type.Record(Type.String(), Type.String()),
    middlewares: Type.Array(Type.String()),
    traefik_version: Type.Union([Type.String(), Type.Null()], {
      description: "null: the default document's version (setting or Traefik's /api/version)",
    }),
    url: Type.String({ description: 'path Traefik polls for this target' }),
    created_at: Type.String(),
    updated_at: Type.String(),
    etag: Type.String(),
  },
  { additionalProperties: false },
);
export type TargetView = Static<typeof Target>;

const tags = ['proxy-config'];

export const listSchema = {
  tags,
  summary: 'List provider targets',
  querystring: Type.Object({ ...Paging }),
  response: { 200: Type.Array(Target), ...ErrorResponses },
};
export const createSchema = {
  tags,
  summary: 'Create a provider target',
  body: TargetCreate,
  response: { 201: Target, ...ErrorResponses },
};
export const getSchema = {
  tags,
  summary: 'Read one provider target',
  params: IdParams,
  response: { 200: Target, 304: NoBody, ...ErrorResponses },
};
export const replaceSchema = {
  tags,
  summary: 'Replace a provider target',
  params: IdParams,
  body: TargetReplace,
  response: { 200: Target, ...ErrorResponses },
};
export const deleteSchema = {
  tags,
  summary: 'Delete a provider target',
  params: IdParams,
  response: { 204: NoBody, ...ErrorResponses },
};

/** Path parameter of `/api/v1/proxy-config/:target` (any string: an unknown one is a 404, not a 422). */
export const TargetParams = Type.Object({ target: Type.String({ maxLength: 100 }) });
