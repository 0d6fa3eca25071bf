/** Errors of the auth group: catalogue ids of API.md §2.4 with messages that name the token. */
import { errors } from '../../core/errors/app-error.ts';

export const authErrors = {
  tokenExists: (name: string) => errors.alreadyExists(`a token named ${name} already exists`),
  tokenNotFound: (name: string) => errors.notFound(`no token named ${name}`),
  lastAdminToken: (name: string) =>
    errors.conflict(`token ${name} is the last admin token; create another admin token first`),
};
