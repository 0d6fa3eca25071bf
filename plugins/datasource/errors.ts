/** Errors of the data source group, built on the core catalogue ids (API.md §2.4, §4.5). */
import { errors, validationError } from '../../core/errors/app-error.ts';

export const datasourceErrors = {
  notFound: (name: string) => errors.notFound(`data source ${name} does not exist`),
  /** GET /api/datasource/active while `active` in datasources.yaml names no (valid) source. */
  noActive: (active: string) =>
    errors.notFound(
      active ? `the active data source ${active} is not defined in datasources.yaml` : 'no data source is active',
    ),
  modeNone: () =>
    errors.notFound('data source mode none: no data source is active (the provider serves own objects only)'),
  reservedName: (name: string) =>
    validationError([{ path: '/name', message: `${name} is reserved (data source mode none)` }]),
  unknownActive: (name: string) => validationError([{ path: '/name', message: `names no data source: ${name}` }]),
  activeInUse: (name: string) =>
    errors.inUse(`data source ${name} is the active data source; activate another one first`, [
      { path: '/api/datasource/active', message: 'is the active data source' },
    ]),
};
