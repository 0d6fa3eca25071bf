/** Errors of the backup group, on the core catalogue ids of API.md §2.4 (`not_found`, `busy`, `invalid_archive`). */
import { AppError, errors, type ErrorDetail } from '../../core/errors/app-error.ts';

export const backupErrors = {
  notFound: (id: string) => errors.notFound(`backup ${id} does not exist`),
  busy: (running: string) =>
    new AppError(
      409,
      'busy',
      `a ${running} is running; one backup, restore or cleanup runs at a time, try again when it has finished`,
    ),
  /** `details` name the entries (paths inside the archive) that failed. */
  invalidArchive: (id: string, details: ErrorDetail[]) =>
    new AppError(
      422,
      'invalid_archive',
      `backup ${id} fails the integrity or safety checks, nothing was changed: ${details[0]?.path} ${details[0]?.message}`,
      details,
    ),
};
