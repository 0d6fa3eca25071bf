/** Errors of the middlewares group, built on the core catalogue ids (API.md §2.4, §4.2). */
import { errors, type ErrorDetail } from '../../core/errors/app-error.ts';
import { referrerDetails } from '../../model/references.ts';

export const middlewareErrors = {
  notFound: (id: string) => errors.notFound(`middleware ${id} does not exist`),
  idTaken: (id: string) => errors.alreadyExists(`middleware id ${id} is already taken`),
  nameTaken: (name: string, id: string) => errors.alreadyExists(`middleware name "${name}" is already used by ${id}`),
  upstreamKey: (id: string) =>
    errors.alreadyExists(`middleware id ${id} equals a middleware key of the upstream configuration`),
  usedByChains: (id: string, chains: string[]) =>
    errors.inUse(
      `middleware ${id} is listed by ${chains.length === 1 ? 'a chain' : `${chains.length} chains`}; remove it from ${chains.length === 1 ? 'that chain' : 'those chains'} first`,
      referrerDetails(chains, 'middleware'),
    ),
  usedByResources: (id: string, paths: string[]) =>
    errors.inUse(
      `middleware ${id} is still referenced (see details); force=true removes resource assignments, never chain entries`,
      referrerDetails(paths, 'middleware'),
    ),
  idMismatch: (bodyId: string, id: string): ErrorDetail[] => [
    { path: '/id', message: `must equal the path id ${id} (ids are immutable), got "${bodyId.slice(0, 80)}"` },
  ],
};
