/** TypeBox schemas of POST /api/import/middleware-manager (API.md §4.24). */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, JsonObject, QueryBool } from '../../model/schemas.ts';

const tags = ['import'];

/** The upload limit of this route (API.md §4.24: ≤ 100 MiB), instead of server.body_limit. */
export const MAX_DATABASE_BYTES = 100 * 1024 * 1024;

const Created = Type.Object(
  {
    middlewares: Type.Array(
      Type.Object({ id: Type.String(), name: Type.String(), type: Type.String(), from: Type.String() }),
      { description: 'middlewares created (from: its middleware-manager id)' },
    ),
    services: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        type: Type.String(),
        protocol: Type.String(),
        from: Type.String(),
      }),
    ),
    assignments: Type.Array(
      Type.Object({
        resource_id: Type.String(),
        kind: Type.Union([Type.Literal('middleware'), Type.Literal('service')]),
        id: Type.String({ description: 'middleware or service id' }),
        priority: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the default (100)' }),
        from: Type.String({ description: "middleware-manager's resource id" }),
      }),
    ),
    overrides: Type.Array(
      Type.Object({
        resource_id: Type.String(),
        kind: Type.String({ description: 'config sub-object (http, tls, tcp, headers, priority, mtlswhitelist)' }),
        config: JsonObject,
        from: Type.String(),
      }),
    ),
  },
  { additionalProperties: false },
);

export const ImportReport = Type.Object(
  {
    dry_run: Type.Boolean(),
    created: Created,
    skipped: Type.Array(
      Type.Object({
        kind: Type.Union(['middleware', 'service', 'resource', 'assignment', 'override'].map((k) => Type.Literal(k))),
        name: Type.String(),
        reason: Type.String(),
      }),
    ),
    warnings: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);
export type ImportReportBody = Static<typeof ImportReport>;

export const importSchema = {
  tags,
  summary: "Import middleware-manager's SQLite database: middlewares, services, assignments, router overrides",
  description:
    'Body: the database file as application/octet-stream (≤ 100 MiB). Everything is validated before anything is written; `dry_run=true` only answers what would be created and skipped.',
  querystring: Type.Object({ dry_run: Type.Optional(QueryBool) }),
  response: { 200: ImportReport, 413: ErrorBody, 415: ErrorBody, 422: ErrorBody, 409: ErrorBody, 404: ErrorBody },
};
