/** Errors of the resources group, built on the core catalogue ids (API.md §2.4, §4.4). */
import { AppError, errors, validationError, type ErrorDetail } from '../../core/errors/app-error.ts';

export const resourceErrors = {
  notFound: (id: string) => errors.notFound(`resource ${id} does not exist`),
  stillActive: (id: string) =>
    new AppError(
      409,
      'resource_active',
      `resource ${id} is still active upstream; only disabled resources can be deleted`,
    ),
  disabled: (id: string) =>
    errors.conflict(
      `resource ${id} is disabled (its router is missing upstream); its settings can only change while it is active`,
    ),
  middlewareUnknown: (middlewareId: string) => errors.notFound(`middleware ${middlewareId} does not exist`),
  /** Bulk assignment: every unknown id in one 422, nothing applied. */
  middlewaresUnknown: (details: ErrorDetail[]) => validationError(details),
  middlewareNotAssigned: (id: string, middlewareId: string) =>
    errors.notFound(`middleware ${middlewareId} is not assigned to resource ${id}`),
  externalNotFound: (id: string, name: string) => errors.notFound(`resource ${id} has no external middleware ${name}`),
  serviceUnknown: (serviceId: string) => errors.notFound(`service ${serviceId} does not exist`),
  serviceProtocol: (serviceId: string, protocol: string, wanted: string, pointer: string) =>
    validationError([
      { path: pointer, message: `service ${serviceId} is a ${protocol} service; a ${wanted} service is required` },
    ]),
  noService: (id: string) => errors.notFound(`resource ${id} has no assigned service`),
  tcpWithoutHost: (id: string) =>
    validationError([
      { path: '/sni_rule', message: `is required: resource ${id} has no host to build HostSNI(\`<host>\`) from` },
    ]),
  notLocal: (id: string) =>
    new AppError(
      409,
      'not_local',
      `resource ${id} is discovered, not local: edit it through its sub-routes (middlewares, service, config)`,
    ),
  alreadyExists: (id: string) => errors.alreadyExists(`resource ${id} already exists`),
  serviceTaken: (serviceId: string) =>
    errors.alreadyExists(
      `service ${serviceId} exists and was not created for this resource: reference it with service_id instead of servers`,
    ),
  localNeedsService: (id: string) =>
    errors.conflict(
      `resource ${id} is local: its router needs a service; assign another one (POST /service) or PUT the resource`,
    ),
  mtlsUnavailable: (reason: string) => errors.conflict(`mTLS cannot be enabled for a resource: ${reason}`),
};
