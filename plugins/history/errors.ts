/** Errors of the history group, on the core catalogue ids of API.md §2.4 (`not_found`, `validation_failed`). */
import { AppError, errors, type ErrorDetail } from '../../core/errors/app-error.ts';

export const historyErrors = {
  notFound: (rev: string) => errors.notFound(`revision ${rev} is not in the config history`),
  /** A restore refused before anything was written; `details` name each file and why. */
  notRestorable: (rev: string, details: ErrorDetail[]) =>
    new AppError(
      422,
      'validation_failed',
      `nothing was restored from ${rev.slice(0, 12)}: ${details[0].message}${details.length > 1 ? ` (and ${details.length - 1} more)` : ''}`,
      details,
    ),
  /** History is off (history.enabled: false) or git is not available. */
  unavailable: (why: string) => new AppError(503, 'not_configured', `the config history is not available: ${why}`),
};
