/** TypeBox schemas of the Logs group (API.md §4.13): params, queries and responses per status. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody } from '../../model/schemas.ts';

const tags = ['logs'];
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const LOG_SERVICES = ['secengine', 'proxy', 'tunnelapp', 'tunnelgw'] as const;
export type LogService = (typeof LOG_SERVICES)[number];

export const ServiceParams = Type.Object({
  service: Type.Unsafe<LogService>(
    Type.String({
      pattern: `^(${LOG_SERVICES.join('|')})$`,
      description: 'secengine, proxy, tunnelapp or tunnelgw (logs.services maps them to containers)',
    }),
  ),
});
export type ServiceParamsType = Static<typeof ServiceParams>;

/** An ISO-8601 timestamp or `<n>s|m|h|d` before now (API.md §2.9); checked further in time-range.ts. */
const Instant = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'ISO-8601 timestamp or a duration before now (30s, 15m, 2h, 7d)',
});

export const LinesQuery = Type.Object({
  tail: Type.Integer({ minimum: 1, maximum: 10000, default: 100 }),
  since: Type.Optional(Instant),
  until: Type.Optional(Instant),
  stream: Type.Unsafe<'stdout' | 'stderr' | 'all'>(
    Type.String({ pattern: '^(stdout|stderr|all)$', default: 'all', description: 'stdout, stderr or all' }),
  ),
});
export type LinesQueryType = Static<typeof LinesQuery>;

export const StreamQuery = Type.Object({
  tail: Type.Integer({ minimum: 0, maximum: 1000, default: 50 }),
  stream: LinesQuery.properties.stream,
  access_token: Type.Optional(
    Type.String({ description: 'API token (browsers cannot set headers on a WebSocket); redacted in logs' }),
  ),
});
export type StreamQueryType = Static<typeof StreamQuery>;

export const LogLine = Type.Object(
  {
    ts: Type.String({ description: 'as Docker gives it (RFC3339Nano)' }),
    stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr')]),
    line: Type.String(),
    truncated: Type.Boolean({ description: 'the line was longer than 16 KiB and was cut' }),
  },
  { additionalProperties: false },
);

export const StatsQuery = Type.Object({
  since: Type.Optional(Instant),
  until: Type.Optional(Instant),
  top: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
});
export type StatsQueryType = Static<typeof StatsQuery>;

const Top = Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }, { additionalProperties: false }));
const Counts = Type.Record(Type.String(), Type.Integer());

export const Stats = Type.Object(
  {
    source: Type.String({ description: 'file:<path> or container:<name>' }),
    format: Nullable(
      Type.Union([Type.Literal('json'), Type.Literal('clf'), Type.Literal('mixed')], {
        description: 'null when no line parsed',
      }),
    ),
    lines_read: Type.Integer(),
    lines_skipped: Type.Integer(),
    from: Nullable(Type.String({ description: 'start of the earliest counted request' })),
    to: Nullable(Type.String({ description: 'start of the latest counted request' })),
    requests: Type.Integer(),
    status_classes: Counts,
    status_codes: Counts,
    methods: Counts,
    top_ips: Top,
    top_hosts: Top,
    top_paths: Top,
    top_routers: Top,
    top_services: Top,
    latency_ms: Type.Object(
      {
        p50: Nullable(Type.Number()),
        p90: Nullable(Type.Number()),
        p95: Nullable(Type.Number()),
        p99: Nullable(Type.Number()),
        max: Nullable(Type.Number()),
      },
      { additionalProperties: false },
    ),
    bytes_sent: Type.Integer(),
    error_rate: Type.Number(),
    requests_per_minute: Type.Array(
      Type.Object({ minute: Type.String(), count: Type.Integer() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
export type StatsView = Static<typeof Stats>;

export const linesSchema = {
  tags,
  summary: 'Container log lines of a stack service, oldest first',
  params: ServiceParams,
  querystring: LinesQuery,
  response: { 200: Type.Array(LogLine), 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
};
export const statsSchema = {
  tags,
  summary: 'Traefik access-log statistics',
  querystring: StatsQuery,
  response: { 200: Stats, 422: ErrorBody, 502: ErrorBody, 503: ErrorBody },
};
export const streamSchema = {
  tags,
  summary: 'Live container log lines over a WebSocket (JSON text frames)',
  params: ServiceParams,
  querystring: StreamQuery,
  response: { 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
};
