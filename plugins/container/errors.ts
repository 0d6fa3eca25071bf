/** Errors of the Containers group, built on the core catalogue ids (API.md §2.4, §4.11). */
import { errors } from '../../core/errors/app-error.ts';

export const containerErrors = {
  notFound: (name: string) => errors.notFound(`no container named ${name}`),
  /** The container exists but is not one of the stack's (API.md §4.11: 403 `forbidden`). */
  outsideStack: (name: string) =>
    errors.forbidden(
      `container ${name} is not part of the stack; only stack containers can be started, stopped or restarted`,
    ),
  /** Docker refused the action in the container's current state (e.g. start of a paused container). */
  refused: (name: string, action: string, message: string) =>
    errors.conflict(`Docker refused to ${action} container ${name}: ${message}`),
  dockerUnavailable: (endpoint: string, message: string) =>
    errors.upstreamUnavailable(`Docker at ${endpoint} is unavailable (${message})`),
};
