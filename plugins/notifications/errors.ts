/** Errors of the notifications group, on the core catalogue ids (API.md §2.4, §4.21). */
import { errors, validationError, type ErrorDetail } from '../../core/errors/app-error.ts';

export const notificationErrors = {
  notFound: (id: string) => errors.notFound(`notification channel ${id} does not exist`),
  idTaken: (id: string) => errors.alreadyExists(`notification channel id ${id} is already taken`),
  nameTaken: (name: string, id: string) =>
    errors.alreadyExists(`notification channel name "${name}" is already used by ${id}`),
  invalid: (details: ErrorDetail[]) => validationError(details),
  /** "********" sent for a secret that is not stored (a new channel, or another type). */
  maskWithoutSecret: (paths: string[]) =>
    validationError(
      paths.map((path) => ({
        path,
        message: 'is "********", which keeps a stored secret, but this channel has none stored: send the value',
      })),
    ),
};
