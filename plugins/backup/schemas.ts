/** TypeBox schemas of /api/backup (API.md §4.10): bodies, params, responses per status. */
import type { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import { ErrorBody, ErrorResponses, NoBody, Paging } from '../../model/schemas.ts';
import { BACKUP_ID_PATTERN, BACKUP_KINDS } from './naming.ts';

export const BackupId = Type.String({
  pattern: BACKUP_ID_PATTERN,
  description: 'backup-<UTC yyyymmddThhmmssZ>[-<suffix>]',
});
export const BackupParams = Type.Object({ id: BackupId });

export const Backup = Type.Object(
  {
    id: BackupId,
    file: Type.String({ description: 'file name in BACKUP_DIR' }),
    size: Type.Integer({ description: 'archive size in bytes' }),
    created_at: Type.String(),
    kind: Type.Union(BACKUP_KINDS.map((k) => Type.Literal(k))),
    note: Type.String(),
    app_version: Type.String(),
    files: Type.Integer({ description: 'number of files in the archive (manifest entries)' }),
  },
  { additionalProperties: false },
);
export type BackupView = Static<typeof Backup>;

export const CreateBody = Type.Object({
  dry_run: Type.Optional(
    Type.Boolean({ default: false, description: 'report what would be archived; nothing is written' }),
  ),
  note: Type.Optional(Type.String({ maxLength: 200, default: '' })),
});

export const DryRun = Type.Object(
  {
    dry_run: Type.Literal(true),
    would_create: BackupId,
    files: Type.Integer(),
    bytes: Type.Integer({ description: 'sum of file sizes, uncompressed' }),
    entries: Type.Array(Type.Object({ path: Type.String(), size: Type.Integer() })),
  },
  { additionalProperties: false },
);

export const RestoreBody = Type.Object({
  backup_id: BackupId,
  restore_tokens: Type.Optional(
    Type.Boolean({ default: false, description: 'also restore auth/ (API tokens); otherwise the current one stays' }),
  ),
  include_extra: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'write extra/ files back to their original paths still listed in backup.include',
    }),
  ),
});
export type RestoreBodyType = Static<typeof RestoreBody>;

export const RestoreResult = Type.Object(
  {
    restored: BackupId,
    safety_backup: BackupId,
    files: Type.Integer({ description: 'files put in place (data files, plus extra files written back)' }),
  },
  { additionalProperties: false },
);
export type RestoreResultType = Static<typeof RestoreResult>;

export const CleanupResult = Type.Object(
  {
    deleted: Type.Array(BackupId),
    kept: Type.Integer({ description: 'backups left' }),
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object(Paging);

/** Errors any route here can answer (API.md §2.3 auth, §2.4). */
const Errors = { ...ErrorResponses, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody };
const Empty = NoBody;
const Gzip = Type.Unsafe<Buffer | Readable>({
  type: 'string',
  format: 'binary',
  description: 'the archive (application/gzip)',
});
const tags = ['backup'];

export const listSchema = {
  tags,
  summary: 'List backups, newest first',
  querystring: ListQuery,
  response: { 200: Type.Array(Backup), ...Errors },
};
export const getSchema = {
  tags,
  summary: 'Read one backup',
  params: BackupParams,
  response: { 200: Backup, ...Errors },
};
export const downloadSchema = {
  tags,
  summary: 'Download a backup archive',
  params: BackupParams,
  produces: ['application/gzip'],
  response: { 200: Gzip, ...Errors },
};
export const createSchema = {
  tags,
  summary: 'Create a backup (or a dry run)',
  body: CreateBody,
  response: { 201: Backup, 200: DryRun, ...Errors },
};
export const restoreSchema = {
  tags,
  summary: 'Restore a backup (a pre-restore backup is taken first)',
  body: RestoreBody,
  response: { 200: RestoreResult, ...Errors },
};
export const deleteSchema = {
  tags,
  summary: 'Delete a backup',
  params: BackupParams,
  response: { 204: Empty, ...Errors },
};
export const cleanupSchema = {
  tags,
  summary: 'Apply the retention policy now',
  response: { 200: CleanupResult, ...Errors },
};
