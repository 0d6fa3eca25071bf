/** TypeBox schemas of the static configuration group (API.md §4.20): requests, and responses per status code. */
import { Type } from '@sinclair/typebox';
import { ErrorBody, NoBody } from '../../model/schemas.ts';
import { Job } from '../jobs/schemas.ts';

/** Traefik's entry point names (the names its static config and routers' `entryPoints` accept). */
export const ENTRY_POINT_NAME = '^[A-Za-z0-9_-]+$';

const tags = ['static'];
const Errors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 503: ErrorBody } as const;
const Name = Type.String({ pattern: ENTRY_POINT_NAME, maxLength: 128, description: 'entry point name' });
const Nullable = <T extends ReturnType<typeof Type.String | typeof Type.Integer | typeof Type.Boolean>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const EntryPoint = Type.Object({
  name: Type.String(),
  address: Nullable(Type.String()),
  protocol: Type.Union([Type.Literal('tcp'), Type.Literal('udp')]),
  port: Nullable(Type.Integer()),
  in_static_config: Type.Boolean(),
  published_on_gerbil: Nullable(Type.Boolean({ description: 'null when no compose file is configured' })),
  published_on_gerbil_warnings: Type.Array(Type.String(), {
    description:
      'when published_on_gerbil is false: each services.gerbil.ports item that could not be read and could publish this port, with why (a variable without a value, the .env file and line that cannot be used); [] otherwise',
  }),
  used_by: Type.Array(Type.String(), { description: 'ids of resources whose routers use it' }),
  routers: Type.Array(Type.String(), { description: "the served document's routers that use it" }),
});

export const listSchema = {
  tags,
  summary: "Traefik's entry points, and the ones routers use that are missing",
  response: { 200: Type.Array(EntryPoint), ...Errors },
};

export const putSchema = {
  tags,
  summary: 'Adds an entry point to the Traefik static config or sets its address',
  params: Type.Object({ name: Name }),
  body: Type.Object(
    { address: Type.String({ maxLength: 16, description: '":<port>" or ":<port>/udp", port 1-65535' }) },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Intersect([EntryPoint, Type.Object({ restart_required: Type.Array(Type.String()) })]),
    ...Errors,
  },
};

export const deleteSchema = {
  tags,
  summary: 'Removes an entry point no router uses from the Traefik static config',
  params: Type.Object({ name: Name }),
  response: { 204: NoBody, ...Errors },
};

export const syncSchema = {
  tags,
  summary: 'Adds every missing tcp-<port>/udp-<port> entry point and publishes its port on Gerbil',
  body: Type.Optional(Type.Object({ dry_run: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
  response: {
    200: Type.Object({
      dry_run: Type.Boolean(),
      added: Type.Array(Type.String()),
      published: Type.Array(Type.String()),
      skipped: Type.Array(Type.Object({ name: Type.String(), reason: Type.String() })),
      compose_file: Nullable(Type.String()),
      restart_required: Type.Array(Type.String()),
    }),
    ...Errors,
  },
};

/** POST /api/static/apply (API.md §4.20): which services, and the health wait as an update's (§4.11). */
export const ApplyBody = Type.Object(
  {
    services: Type.Optional(
      Type.Array(Type.Union([Type.Literal('traefik'), Type.Literal('gerbil')]), {
        minItems: 1,
        maxItems: 2,
        uniqueItems: true,
        description: "traefik (restarted) and/or gerbil (recreated with the compose file's ports); default both",
      }),
    ),
    health_timeout_s: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 600,
        default: 120,
        description:
          'how long a restarted or new container may take to become healthy, and Traefik to list its entry points',
      }),
    ),
  },
  { additionalProperties: false },
);

export const applySchema = {
  tags,
  summary: "Restarts Traefik and recreates Gerbil with the compose file's ports, as a job (rollback on failure)",
  body: Type.Optional(ApplyBody),
  response: {
    202: Job,
    401: ErrorBody,
    403: ErrorBody,
    409: ErrorBody,
    415: ErrorBody,
    422: ErrorBody,
    429: ErrorBody,
    502: ErrorBody,
    503: ErrorBody,
  },
};

/** One file setting (docs/API.md "Static settings"), shaped like GET /api/plugins/configpath. */
const SettingView = Type.Object({
  path: Nullable(Type.String()),
  source: Type.Union([Type.Literal('settings'), Type.Literal('env'), Type.Literal('unset')], {
    description: 'settings.yaml, the env/config value, or none',
  }),
  exists: Type.Boolean({ description: 'compose_file: a file; plugins_local_dir: a directory' }),
  writable: Type.Boolean({ description: 'it, or when missing its parent directory, is writable' }),
});

const StaticSettings = Type.Object({ compose_file: SettingView, plugins_local_dir: SettingView });

const SettingPath = (description: string) => Type.Union([Type.String({ maxLength: 4096, description }), Type.Null()]);

export const getSettingsSchema = {
  tags,
  summary: 'The compose file and plugins-local directory in effect, and where each comes from',
  response: { 200: StaticSettings, ...Errors },
};

export const putSettingsSchema = {
  tags,
  summary: 'Sets (or, with null, clears) the compose file and plugins-local directory in settings.yaml',
  body: Type.Object(
    {
      compose_file: Type.Optional(
        SettingPath("absolute path of the compose file whose services.gerbil.ports publishes Traefik's ports"),
      ),
      plugins_local_dir: Type.Optional(
        SettingPath("absolute host path of Traefik's plugins-local directory (vendored plugins)"),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: StaticSettings, ...Errors },
};
