/** Errors of the import group (API.md §4.24): `invalid_database`, and a write failure after rollback. */
import { AppError, type ErrorDetail } from '../../core/errors/app-error.ts';

export const importErrors = {
  /** The upload is not a middleware-manager SQLite database; nothing was written. */
  invalidDatabase: (message: string, details?: ErrorDetail[]) =>
    new AppError(422, 'invalid_database', `middleware-manager database refused: ${message}`, details),
  /** A write failed: what the import had written was undone; the cause keeps its status and id. */
  rolledBack: (cause: AppError) =>
    new AppError(cause.statusCode, cause.id, `import rolled back, nothing was kept: ${cause.message}`, cause.details),
};
