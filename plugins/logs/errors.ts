/** Errors of the Logs group, built on the core catalogue ids (API.md §2.4, §4.13). */
import { AppError, errors, validationError } from '../../core/errors/app-error.ts';

export const logErrors = {
  containerMissing: (service: string, name: string) =>
    errors.notFound(`no container named ${name} (log service ${service})`),
  /** The configured access-log file cannot be opened: the deployment has not mounted it (API.md §4.13). */
  accessLogUnreadable: (path: string, reason: string) =>
    errors.notConfigured(`the access log logs.proxy_access_log (${path}) cannot be read: ${reason}`),
  /** The fallback (no file configured) reads the proxy container; any failure there is Docker's (502). */
  fallbackUnreadable: (name: string, reason: string) =>
    errors.upstreamUnavailable(`Docker: the proxy container ${name} cannot be read for access-log stats (${reason})`),
  websocketRequired: () =>
    new AppError(400, 'websocket_required', 'this route streams logs over a WebSocket; send Upgrade: websocket'),
  originForbidden: (origin: string) =>
    errors.forbidden(`WebSocket Origin ${origin} is neither same-origin nor listed in cors.origins`),
  badQuery: (name: string, message: string) => validationError([{ path: `/query/${name}`, message }]),
};
