/** TypeBox schemas of /api/jobs (API.md §4.14): the Job object, list filters, params, responses. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody, Paging } from '../../model/schemas.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const tags = ['jobs'];

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const STEP_STATUSES = ['pending', 'running', 'ok', 'failed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** `job-` + a lower-case ULID (Crockford base32: no i, l, o, u). */
export const JOB_ID_PATTERN = '^job-[0-9a-hjkmnp-tv-z]{26}$';
const Kind = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,62}$',
  description: 'what the job does: container_update (§4.11) or static_apply (§4.20)',
});

export const JobStep = Type.Object(
  {
    service: Nullable(
      Type.String({ description: 'the container the step works on; null for job-wide steps (backup)' }),
    ),
    step: Type.String({
      description: 'backup, pull, rename, create, start, health, cleanup, rollback; restart and entrypoints (apply)',
    }),
    status: Type.Union(STEP_STATUSES.map((s) => Type.Literal(s))),
    message: Type.String({ description: 'what the step did or is doing, for a person' }),
    started_at: Nullable(Type.String()),
    finished_at: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type JobStepView = Static<typeof JobStep>;

export const Job = Type.Object(
  {
    id: Type.String({ pattern: JOB_ID_PATTERN }),
    kind: Kind,
    status: Type.Union(JOB_STATUSES.map((s) => Type.Literal(s))),
    progress: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'finished steps / all steps; 1 once the job has finished',
    }),
    params: Type.Record(Type.String(), Type.Unknown(), {
      description: 'the request that started the job, with defaults applied',
    }),
    steps: Type.Array(JobStep),
    error: Nullable(Type.String({ description: 'why the job failed, naming the step' })),
    created_at: Type.String(),
    started_at: Nullable(Type.String()),
    finished_at: Nullable(Type.String()),
  },
  { additionalProperties: false, $id: 'Job' },
);
export type JobView = Static<typeof Job>;

export const ListQuery = Type.Object({
  kind: Type.Optional(Kind),
  status: Type.Optional(
    Type.Union(
      JOB_STATUSES.map((s) => Type.Literal(s)),
      { description: 'queued, running, succeeded or failed' },
    ),
  ),
  ...Paging,
});
export type ListQueryType = Static<typeof ListQuery>;

export const JobParams = Type.Object({
  id: Type.String({ pattern: JOB_ID_PATTERN, description: 'job-<lower-case ULID>' }),
});

const Errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 429: ErrorBody };

export const listSchema = {
  tags,
  summary: 'Jobs kept in memory (last 100 or 24 h, whichever keeps fewer), newest first',
  querystring: ListQuery,
  response: { 200: Type.Array(Job), ...Errors },
};
export const getSchema = {
  tags,
  summary: 'One job: status, progress and steps',
  params: JobParams,
  response: { 200: Job, ...Errors },
};
