/** Schemas of the config provider routes (API.md §4.9). */
import { Type, type Static } from '@sinclair/typebox';

export const ProviderQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('yaml')])),
  target: Type.Optional(
    Type.String({ maxLength: 100, description: "a provider target's id; absent: the default document" }),
  ),
});

export const InvalidateResult = Type.Object({
  regenerated_at: Type.String(),
  etag: Type.String({ description: 'ETag of the JSON body, without quotes' }),
  changed: Type.Boolean(),
  stale: Type.Boolean(),
  upstream_error: Type.Union([Type.String(), Type.Null()]),
});

const PathMessage = Type.Object({ path: Type.String(), message: Type.String() });

const DroppedKeys = Type.Array(
  Type.Object({
    path: Type.String({ description: 'JSON Pointer of the object that held the key' }),
    key: Type.String(),
    min_version: Type.Union([Type.String(), Type.Null()], {
      description: 'first Traefik version that decodes it; null: no version does',
    }),
  }),
  { description: 'keys left out of the served document: the Traefik polling it cannot decode them (G14)' },
);

export const Status = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('error'), Type.Literal('starting')]),
  mode: Type.Union([Type.Literal('pangolin'), Type.Literal('traefik'), Type.Literal('none')]),
  etag: Type.Union([Type.String(), Type.Null()]),
  generated_at: Type.Union([Type.String(), Type.Null()]),
  stale: Type.Boolean(),
  upstream: Type.Object({
    source: Type.Union([Type.String(), Type.Null()]),
    type: Type.Union([Type.String(), Type.Null()]),
    url: Type.Union([Type.String(), Type.Null()]),
    last_ok_at: Type.Union([Type.String(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    last_error_at: Type.Union([Type.String(), Type.Null()]),
    empty_streak: Type.Integer(),
  }),
  counts: Type.Object({
    routers: Type.Integer(),
    services: Type.Integer(),
    middlewares: Type.Integer(),
    patched_routers: Type.Integer(),
  }),
  invalid_files: Type.Array(
    Type.Object({
      path: Type.String(),
      line: Type.Union([Type.Integer(), Type.Null()]),
      column: Type.Union([Type.Integer(), Type.Null()]),
      message: Type.String(),
    }),
  ),
  conflicts: Type.Array(Type.Object({ kind: Type.String(), key: Type.String(), message: Type.String() })),
  dangling_references: Type.Array(Type.Object({ from: Type.String(), ref: Type.String() })),
  schema_warnings: Type.Array(PathMessage),
  traefik_version: Type.Object(
    {
      version: Type.Union([Type.String(), Type.Null()], { description: 'null: unknown' }),
      source: Type.Union([Type.Literal('setting'), Type.Literal('traefik'), Type.Null()], {
        description: "`proxy.traefik_version`, or `/api/version` of the explorer's Traefik source",
      }),
      start_date: Type.Union([Type.String(), Type.Null()], { description: "Traefik's startDate at the last read" }),
      error: Type.Union([Type.String(), Type.Null()], { description: 'why the last read failed' }),
    },
    { description: 'the Traefik version the default document is gated for (G14)' },
  ),
  dropped_keys: DroppedKeys,
  targets: Type.Array(
    Type.Object({
      id: Type.String({ description: '`default` for the default document' }),
      etag: Type.Union([Type.String(), Type.Null()]),
      generated_at: Type.Union([Type.String(), Type.Null()]),
      traefik_version: Type.Union([Type.String(), Type.Null()], { description: 'the version it is gated for' }),
      dropped_keys: DroppedKeys,
      instances: Type.Array(
        Type.Object({
          remote_address: Type.String(),
          user_agent: Type.String(),
          token_name: Type.Optional(Type.String()),
          last_poll: Type.String(),
          current: Type.Boolean({ description: 'the last body it got is the current one' }),
          polls: Type.Object(
            { '200': Type.Integer(), '304': Type.Integer(), '401': Type.Integer(), '502': Type.Integer() },
            {
              description:
                'its polls by answer status since it was first seen in the window (401: refused, wrong or missing token; 502: no document yet); polls are not logged one by one',
            },
          ),
        }),
        { description: 'instances seen polling this document in the last 10 minutes, latest first' },
      ),
    }),
  ),
});

export type StatusBody = Static<typeof Status>;
