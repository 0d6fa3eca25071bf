/** TypeBox schemas of the Containers group (API.md §4.11): queries, bodies and responses per status. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody, QueryBool } from '../../model/schemas.ts';
import { Job } from '../jobs/schemas.ts';

const tags = ['containers'];
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Port = Type.Object(
  {
    private: Type.Integer(),
    public: Nullable(Type.Integer()),
    type: Type.String({ description: 'tcp, udp or sctp' }),
    ip: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type PortView = Static<typeof Port>;

export const Container = Type.Object(
  {
    id: Nullable(Type.String()),
    name: Type.String(),
    image: Nullable(Type.String({ description: 'the reference the container was created from (Config.Image)' })),
    image_id: Nullable(Type.String()),
    state: Type.String({
      description:
        'created, running, paused, restarting, removing, exited, dead, or missing (a configured stack name with no container)',
    }),
    status: Nullable(Type.String({ description: 'Docker\'s human-readable status, e.g. "Up 5 minutes"' })),
    health: Nullable(
      Type.Union([Type.Literal('healthy'), Type.Literal('unhealthy'), Type.Literal('starting'), Type.Literal('none')]),
    ),
    created_at: Nullable(Type.String()),
    started_at: Nullable(Type.String()),
    ports: Nullable(Type.Array(Port)),
    in_stack: Type.Boolean(),
    labels: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
  },
  { additionalProperties: false },
);
export type ContainerView = Static<typeof Container>;

export const ListQuery = Type.Object({
  all: Type.Optional(QueryBool),
  labels: Type.Optional(QueryBool),
});
export type ListQueryType = Static<typeof ListQuery>;

export const ACTIONS = ['start', 'stop', 'restart'] as const;
export type ContainerAction = (typeof ACTIONS)[number];

export const ActionParams = Type.Object({
  action: Type.Union(
    ACTIONS.map((action) => Type.Literal(action)),
    { description: 'start, stop or restart' },
  ),
});

/** Docker container names (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`), a leading `/` tolerated. */
const ContainerName = Type.String({
  pattern: '^/?[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$',
  description: 'container name (a leading / is ignored)',
});
export const ActionBody = Type.Object({ container_name: ContainerName });

export const ActionResult = Type.Object(
  {
    name: Type.String(),
    action: Type.String(),
    state: Type.String({ description: 'the Docker state after the action' }),
  },
  { additionalProperties: false },
);
export type ActionResultView = Static<typeof ActionResult>;

export const ImageUpdate = Type.Object(
  {
    service: Type.String({ description: 'the stack container name' }),
    image: Type.String({ description: 'the reference the container runs (Config.Image)' }),
    current_digest: Nullable(Type.String()),
    latest_digest: Nullable(Type.String()),
    update_available: Nullable(Type.Boolean()),
    checked_at: Type.String({ description: 'when the registry was asked (answers are cached per reference)' }),
    error: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type ImageUpdateView = Static<typeof ImageUpdate>;

export const UpdatesQuery = Type.Object({ refresh: Type.Optional(QueryBool) });

export const listSchema = {
  tags,
  summary: 'Stack containers (all=true: every container, read-only)',
  querystring: ListQuery,
  response: { 200: Type.Array(Container), 422: ErrorBody, 502: ErrorBody },
};
export const actionSchema = {
  tags,
  summary: 'Start, stop or restart a stack container (idempotent)',
  params: ActionParams,
  body: ActionBody,
  response: { 200: ActionResult, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 502: ErrorBody },
};
export const updatesSchema = {
  tags,
  summary: 'Image update check of the stack containers (registry digests, cached 10 min)',
  querystring: UpdatesQuery,
  response: { 200: Type.Array(ImageUpdate), 422: ErrorBody, 502: ErrorBody },
};

/** POST /api/container/update (API.md §4.11, §2.10: 1–20 services, health_timeout_s 10–600). */
export const UpdateBody = Type.Object({
  services: Type.Array(ContainerName, {
    minItems: 1,
    maxItems: 20,
    uniqueItems: true,
    description: 'stack container names, updated in this order',
  }),
  backup: Type.Optional(
    Type.Boolean({ default: false, description: 'take a pre-update backup of the data dir first' }),
  ),
  health_timeout_s: Type.Optional(
    Type.Integer({
      minimum: 10,
      maximum: 600,
      default: 120,
      description: 'how long a new container may take to become healthy',
    }),
  ),
});

export const updateSchema = {
  tags,
  summary: 'Update stack containers to the newest image of their reference, as a job (rollback on failure)',
  body: UpdateBody,
  response: {
    202: Job,
    401: ErrorBody,
    403: ErrorBody,
    409: ErrorBody,
    415: ErrorBody,
    422: ErrorBody,
    429: ErrorBody,
    502: ErrorBody,
  },
};
