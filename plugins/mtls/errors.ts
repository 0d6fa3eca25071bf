/** Errors of the mTLS group, built on the core catalogue ids (API.md §2.4, §4.8). */
import { errors } from '../../core/errors/app-error.ts';
import { referrerDetails } from '../../model/references.ts';

export const mtlsErrors = {
  noCa: (action: string) => errors.conflict(`no CA exists: create one with POST /api/mtls/ca before ${action}`),
  caNotFound: () => errors.notFound('no CA exists'),
  caExists: () =>
    errors.alreadyExists(
      'a CA already exists; POST /api/mtls/ca?force=true replaces it and deletes every client certificate',
    ),
  caInUse: (clientIds: string[]) =>
    errors.inUse(
      `${clientIds.length} client certificate${clientIds.length === 1 ? '' : 's'} still exist; force=true deletes them with the CA`,
      referrerDetails(
        clientIds.map((id) => `/api/mtls/clients/${id}`),
        'CA',
      ),
    ),
  clientNotFound: (id: string) => errors.notFound(`client certificate ${id} does not exist`),
  idTaken: (id: string) => errors.alreadyExists(`client id ${id} is already taken`),
  nameTaken: (name: string, id: string) => errors.alreadyExists(`client name "${name}" is already used by ${id}`),
  revokedDownload: (id: string) =>
    errors.conflict(`client certificate ${id} is revoked; its PKCS#12 is no longer handed out`),
  bundleMissing: (id: string) => errors.notFound(`the PKCS#12 file of client ${id} is missing from the data dir`),
  revoked: (message: string) => errors.forbidden(message),
};
