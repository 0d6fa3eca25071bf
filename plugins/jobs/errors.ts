/** Errors of the Jobs group, on the core catalogue ids of API.md §2.4 (`not_found`, `busy`). */
import { AppError, errors } from '../../core/errors/app-error.ts';

export const jobErrors = {
  notFound: (id: string) =>
    errors.notFound(
      `job ${id} does not exist (jobs are kept in memory for 24 h, at most the last 100, and lost on restart)`,
    ),
  /** Another job of a kind that runs one at a time is queued or running. */
  busy: (kind: string, runningId: string) =>
    new AppError(
      409,
      'busy',
      `job ${runningId} (${kind}) is running; one ${kind} job runs at a time, try again when it has finished`,
    ),
};
