/** Errors of the config provider group (API.md §4.9). */
import { errors, type AppError } from '../../core/errors/app-error.ts';

export const proxyConfigErrors = {
  neverProduced: (reason: string | null): AppError =>
    errors.upstreamUnavailable(
      `no configuration has been produced yet: ${reason ?? 'Pangolin has not been fetched yet'}`,
    ),
};
