/** TypeBox schemas of the Plugins group (API.md §4.6): requests, and responses per status code. */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, NoBody, Paging, QueryBool } from '../../model/schemas.ts';

export const KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$';
export const MODULE_PATTERN = '^[A-Za-z0-9.-]+(/[A-Za-z0-9._~-]+)+$';
export const VERSION_PATTERN = '^v[0-9]+\\.[0-9]+\\.[0-9]+([-+][0-9A-Za-z.-]+){0,1}$';

const PluginKey = Type.String({
  pattern: KEY_PATTERN,
  description: 'plugin key under experimental.plugins (the name dynamic `plugin:` configs use)',
});
const ModuleName = Type.String({ pattern: MODULE_PATTERN, maxLength: 512, description: 'Go module path' });
const Errors = {
  400: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  415: ErrorBody,
  422: ErrorBody,
  502: ErrorBody,
  503: ErrorBody,
} as const;
const tags = ['plugins'];

export const Plugin = Type.Object({
  key: Type.String(),
  module_name: Type.Union([Type.String(), Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
  local: Type.Boolean(),
  status: Type.Union([Type.Literal('configured'), Type.Literal('loaded'), Type.Literal('error')]),
  error: Type.Union([Type.String(), Type.Null()]),
  used_by: Type.Array(Type.String(), { description: 'ids of middlewares whose plugin config uses the key' }),
  vendored: Type.Union([
    Type.Object({ version: Type.String(), sha256: Type.String(), at: Type.String() }),
    Type.Null(),
  ]),
});
export type PluginView = Static<typeof Plugin>;

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

export const CatalogueEntry = Type.Object({
  id: Nullable(Type.String()),
  name: Nullable(Type.String()),
  displayName: Nullable(Type.String()),
  author: Nullable(Type.String()),
  type: Nullable(Type.String()),
  import: Nullable(Type.String()),
  summary: Nullable(Type.String()),
  iconUrl: Nullable(Type.String()),
  bannerUrl: Nullable(Type.String()),
  latestVersion: Nullable(Type.String()),
  versions: Type.Optional(Type.Array(Type.String())),
  stars: Type.Optional(Type.Number()),
  snippet: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  isInstalled: Type.Boolean(),
});

export const CatalogueQuery = Type.Object({
  q: Type.Optional(
    Type.String({ maxLength: 200, description: 'case-insensitive substring of name, displayName, summary or import' }),
  ),
  refresh: Type.Optional(QueryBool),
  ...Paging,
});

export const Usage = Type.Object({
  key: Type.String(),
  module_name: Type.Union([Type.String(), Type.Null()]),
  installed: Type.Boolean(),
  used_by: Type.Array(Type.Object({ middleware_id: Type.String(), resources: Type.Array(Type.String()) })),
});
export type UsageView = Static<typeof Usage>;

export const InstallBody = Type.Object(
  {
    module_name: Type.Optional(ModuleName),
    moduleName: Type.Optional(ModuleName),
    version: Type.Optional(Type.String({ pattern: VERSION_PATTERN, maxLength: 128 })),
    key: Type.Optional(PluginKey),
    force: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type InstallBodyType = Static<typeof InstallBody>;

export const InstallResult = Type.Object({
  key: Type.String(),
  module_name: Type.String(),
  version: Type.String(),
  static_config_path: Type.String(),
  backup_path: Type.Union([Type.String(), Type.Null()]),
  changed: Type.Boolean(),
  restart_required: Type.Literal(true),
});
export type InstallResultView = Static<typeof InstallResult>;

export const RemoveBody = Type.Object(
  {
    key: Type.Optional(PluginKey),
    module_name: Type.Optional(ModuleName),
    moduleName: Type.Optional(ModuleName),
  },
  { additionalProperties: false },
);
export type RemoveBodyType = Static<typeof RemoveBody>;
export const RemoveQuery = Type.Object({ key: Type.Optional(PluginKey) });

export const ConfigPath = Type.Object({
  path: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.Literal('settings'), Type.Literal('env'), Type.Literal('unset')]),
  exists: Type.Boolean(),
  writable: Type.Boolean(),
});
export const ConfigPathBody = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);

const Empty = NoBody;

export const listSchema = {
  tags,
  summary: 'Plugins declared in the Traefik static config, with status and users',
  response: { 200: Type.Array(Plugin), ...Errors },
};
export const catalogueSchema = {
  tags,
  summary: 'Middleware plugins of the Traefik plugin catalogue (cached)',
  querystring: CatalogueQuery,
  response: { 200: Type.Array(CatalogueEntry), ...Errors },
};
export const usageSchema = {
  tags,
  summary: 'Which middlewares and resources use a plugin key',
  params: Type.Object({ name: PluginKey }),
  response: { 200: Usage, ...Errors },
};
export const installSchema = {
  tags,
  summary: 'Add or change a plugin in the Traefik static config (restart Traefik afterwards)',
  body: InstallBody,
  response: { 200: InstallResult, 201: InstallResult, ...Errors },
};
export const removeSchema = {
  tags,
  summary: 'Remove a plugin from the Traefik static config (restart Traefik afterwards)',
  body: Type.Optional(RemoveBody),
  querystring: RemoveQuery,
  response: { 204: Empty, ...Errors },
};
export const configPathSchema = {
  tags,
  summary: 'The Traefik static config path in effect',
  response: { 200: ConfigPath, ...Errors },
};
export const putConfigPathSchema = {
  tags,
  summary: 'Set the Traefik static config path (persisted in settings.yaml)',
  body: ConfigPathBody,
  response: { 200: ConfigPath, ...Errors },
};

const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) });
export const vendorSchema = {
  tags,
  summary: "Vendor a plugin: unpack it into Traefik's plugins-local dir and move it to experimental.localPlugins",
  description:
    'Without a body the zip is downloaded from <plugins_registry.url>/public/download/<module>/<version>; an application/zip body (≤ 20 MiB) is used as is.',
  params: KeyParams,
  response: {
    200: Type.Object({
      key: Type.String(),
      module_name: Type.String(),
      version: Type.String(),
      local: Type.Literal(true),
      path: Type.String(),
      sha256: Type.String(),
      restart_required: Type.Array(Type.String()),
    }),
    413: ErrorBody,
    ...Errors,
  },
};
export const unvendorSchema = {
  tags,
  summary: 'Stop vendoring a plugin: back to experimental.plugins with the vendored version',
  params: KeyParams,
  response: {
    200: Type.Object({
      key: Type.String(),
      module_name: Type.String(),
      version: Type.String(),
      restart_required: Type.Array(Type.String()),
    }),
    ...Errors,
  },
};
