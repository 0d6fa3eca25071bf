/** Errors of provider targets, built on the core catalogue ids (API.md §2.4). */
import { errors, type ErrorDetail } from '../../../core/errors/app-error.ts';

/**
 * Ids a target cannot take: the provider routes' own path segments (`/api/v1/proxy-config/<id>`
 * serves a target beside `/status`, `/invalidate` and `/targets`) and `default`, the name of the
 * default document in the status and in `provider` events.
 */
export const RESERVED_IDS: ReadonlySet<string> = new Set(['default', 'status', 'invalidate', 'targets', 'diagnosis']);

export const targetErrors = {
  notFound: (id: string) => errors.notFound(`target ${id} does not exist`),
  idTaken: (id: string) => errors.alreadyExists(`target id ${id} is already taken`),
  nameTaken: (name: string, id: string) => errors.alreadyExists(`target name "${name}" is already used by ${id}`),
  reservedId: (id: string): ErrorDetail => ({
    path: '/id',
    message: `${id} is reserved (${[...RESERVED_IDS].join(', ')} are path segments or names of the provider endpoint)`,
  }),
  idMismatch: (bodyId: string, id: string): ErrorDetail => ({
    path: '/id',
    message: `must equal the path id ${id} (ids are immutable), got "${bodyId.slice(0, 80)}"`,
  }),
};
