/** TypeBox schemas of /api/history (API.md §4.24): the history entry, list filters, restore body. */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, Paging } from '../../model/schemas.ts';

const tags = ['history'];

/** An ISO-8601 timestamp or `<n>s|m|h|d` before now (API.md §2.9). */
const Instant = Type.String({
  pattern: '^([0-9]{1,9}(s|m|h|d)|[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]+(Z|[+-][0-9]{2}:?[0-9]{2})?)?)$',
  description: 'ISO-8601 timestamp or a duration before now (30s, 15m, 2h, 7d)',
});

/** A data file or collection path relative to the data dir. */
const DataPath = Type.String({
  minLength: 1,
  maxLength: 300,
  pattern: '^(?!/)(?!.*(^|/)\\.)[A-Za-z0-9_./-]+$',
  description:
    'a data file, an object (its file without extension) or a collection, relative to the data dir (middlewares, middlewares/auth, middlewares/auth.yaml)',
});

const Rev = Type.String({ pattern: '^[0-9a-f]{4,40}$', description: 'a commit id (4 to 40 hex digits)' });

const FileChange = Type.Object(
  {
    path: Type.String(),
    change: Type.Union([Type.Literal('added'), Type.Literal('modified'), Type.Literal('deleted')]),
  },
  { additionalProperties: false },
);

const entryFields = {
  rev: Type.String({ description: 'commit id' }),
  at: Type.String({ description: 'when the change was made (the first change of its batch)' }),
  author: Type.String({
    description: 'token name (anonymous when auth is off), gitops, discovery, restore, cluster:<node> or stack-manager',
  }),
  source: Type.String({ description: 'api, file, discovery, restore, cluster' }),
  message: Type.String({ description: 'the audit lines of the requests, or what kind of change it was' }),
};

export const HistoryEntry = Type.Object(
  { ...entryFields, files: Type.Array(FileChange) },
  { additionalProperties: false, $id: 'HistoryEntry' },
);

export const HistoryCommit = Type.Object(
  {
    ...entryFields,
    files: Type.Array(
      Type.Object(
        {
          path: Type.String(),
          change: FileChange.properties.change,
          diff: Type.String({ description: "this file's unified diff (secrets appear as redacted:<hash>)" }),
        },
        { additionalProperties: false },
      ),
    ),
    diff: Type.String({ description: 'the whole unified diff of the commit' }),
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object({
  path: Type.Optional(DataPath),
  since: Type.Optional(Instant),
  until: Type.Optional(Instant),
  author: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
  ...Paging,
});
export type ListQueryType = Static<typeof ListQuery>;

export const RevParams = Type.Object({ rev: Rev });

export const RestoreBody = Type.Object({
  paths: Type.Optional(Type.Array(DataPath, { minItems: 1, maxItems: 1000, uniqueItems: true })),
});

const Errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody, 429: ErrorBody, 503: ErrorBody };

export const listSchema = {
  tags,
  summary: 'Config history: one commit per batch of changes, newest first',
  querystring: ListQuery,
  response: { 200: Type.Array(HistoryEntry), ...Errors },
};

export const showSchema = {
  tags,
  summary: 'One commit of the config history with its unified diff (secrets redacted)',
  params: RevParams,
  response: { 200: HistoryCommit, ...Errors },
};

export const restoreSchema = {
  tags,
  summary: 'Restore files as they were at a commit, as one new change (operator)',
  params: RevParams,
  body: RestoreBody,
  response: {
    200: Type.Object(
      {
        restored: Type.Array(Type.String()),
        rev: Type.String({ description: 'the commit restored from' }),
      },
      { additionalProperties: false },
    ),
    ...Errors,
  },
};

const Failure = Type.Union([
  Type.Object({ at: Type.String(), message: Type.String() }, { additionalProperties: false }),
  Type.Null(),
]);
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const HistoryStatus = Type.Object(
  {
    enabled: Type.Boolean(),
    available: Type.Optional(Type.Boolean({ description: 'git works and the repository is open' })),
    head: Type.Optional(Nullable(Type.String())),
    commits: Type.Optional(Type.Integer()),
    pending: Type.Optional(Type.Integer({ description: 'files noted and not committed yet' })),
    last_commit_at: Type.Optional(Nullable(Type.String())),
    last_batch_ms: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    last_commit_ms: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], { description: "git's share of the last batch: read, redact, commit" }),
    ),
    last_batch_files: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    last_error: Type.Optional(Failure),
    remote: Type.Optional(
      Type.Union([
        Type.Object(
          {
            url: Type.String({ description: 'without user info' }),
            last_push_at: Nullable(Type.String()),
            pushed_head: Nullable(Type.String()),
            last_error: Failure,
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

export const statusSchema = {
  tags,
  summary: 'State of the config history: head, pending files, last batch, push state',
  response: { 200: HistoryStatus, ...Errors },
};
