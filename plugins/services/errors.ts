/** Errors of the services group, built on the core catalogue ids (API.md §2.4, §4.3). */
import { AppError, errors, type ErrorDetail } from '../../core/errors/app-error.ts';
import { referrerDetails } from '../../model/references.ts';

export const serviceErrors = {
  notFound: (id: string) => errors.notFound(`service ${id} does not exist`),
  idTaken: (id: string) => errors.alreadyExists(`service id ${id} is already taken`),
  discoveredId: (id: string) => errors.alreadyExists(`service id ${id} is the id of a discovered service`),
  upstreamKey: (id: string) =>
    errors.alreadyExists(`service id ${id} equals a service key of the upstream configuration`),
  nameTaken: (name: string, id: string) => errors.alreadyExists(`service name "${name}" is already used by ${id}`),
  readOnly: (id: string) =>
    new AppError(
      409,
      'read_only',
      `service ${id} is discovered from the upstream and cannot be changed or deleted here`,
    ),
  inUse: (id: string, paths: string[]) =>
    errors.inUse(`service ${id} is still referenced by ${paths.length} object(s)`, referrerDetails(paths, 'service')),
  protocolInUse: (id: string, paths: string[]) =>
    errors.inUse(
      `the protocol of service ${id} cannot change while it is referenced`,
      referrerDetails(paths, 'service'),
    ),
  idMismatch: (bodyId: string, id: string): ErrorDetail[] => [
    { path: '/id', message: `must equal the path id ${id} (ids are immutable), got "${bodyId.slice(0, 80)}"` },
  ],
};
