/**
 * Writes of own resources (API.md §4.24): POST /api/resources, PUT /api/resources/:id, and the
 * service that `servers` makes. Every check runs before the first write, so bad input writes
 * nothing; when the resource write fails after the service was made, the service is removed again.
 *
 * The service of `servers` is `<id>-service`, a manual loadBalancer service marked by its
 * description. Only a service so marked is replaced (PUT with servers) or removed (DELETE of the
 * resource, or a PUT that switches to `service_id`), and only when nothing else uses it.
 */
import type { FastifyBaseLogger } from 'fastify';
import { AppError, validationError } from '../../core/errors/app-error.ts';
import { checkName, uniqueSlug } from '../../model/ids.ts';
import { defaultResourceConfig } from '../../model/types.ts';
import type { ResourceRecord } from '../../model/upstream-routers.ts';
import type { ServiceCreateBody, ServiceView } from '../services/schemas.ts';
import { resourceErrors } from './errors.ts';
import {
  createdServiceDescription,
  createdServiceId,
  localBodyProblems,
  localDefinition,
  type LocalBody,
} from './local.ts';
import { assignmentPriority, sortAssigned } from './record.ts';
import type { ResourceRepository } from './repository.ts';
import type { ResourceService } from './service.ts';
import type { ResourceView } from './views.ts';

/** What this needs of the services group (its ServiceManager satisfies it). */
export interface LocalServices {
  get(id: string): ServiceView | undefined;
  create(body: ServiceCreateBody): Promise<ServiceView>;
  replace(id: string, body: ServiceCreateBody): Promise<ServiceView>;
  remove(id: string): Promise<void>;
}

export interface LocalWritesDeps {
  repository: ResourceRepository;
  resources: ResourceService;
  services: LocalServices;
  middlewareExists(id: string): boolean;
  log: FastifyBaseLogger;
}

const serviceBody = (id: string, servers: string[]): ServiceCreateBody => ({
  id: createdServiceId(id),
  name: createdServiceId(id),
  type: 'loadBalancer',
  protocol: 'http',
  config: { servers: servers.map((url) => ({ url })) },
  description: createdServiceDescription(id),
});

export class LocalWrites {
  constructor(private readonly deps: LocalWritesDeps) {}

  /** POST /api/resources: 201 view; 409 already_exists, 404 unknown service/middleware, 422 bad input. */
  async create(body: LocalBody): Promise<ResourceView> {
    const name = checkName(body.name);
    const { repository } = this.deps;
    const id = body.id ?? uniqueSlug(name, 'resource', (candidate) => repository.record(candidate) !== undefined);
    if (repository.record(id)) throw resourceErrors.alreadyExists(id);
    this.check(body);
    const made = body.servers ? await this.makeService(id, body.servers, false) : null;
    try {
      await repository.createLocal(this.record(id, name, body, made ?? body.service_id!));
    } catch (err) {
      if (made) await this.dropCreatedService(id);
      throw err;
    }
    return this.deps.resources.view(id);
  }

  /** PUT /api/resources/:id: 200 view; 409 not_local for a discovered resource. */
  async replace(id: string, body: LocalBody, ifMatch?: string): Promise<ResourceView> {
    const name = checkName(body.name);
    const current = this.deps.repository.record(id);
    if (!current) throw resourceErrors.notFound(id);
    if (current.source !== 'local') throw resourceErrors.notLocal(id);
    if (body.id !== undefined && body.id !== id)
      throw validationError([{ path: '/id', message: `must equal the path id ${id}` }]);
    this.check(body);
    const made = body.servers ? await this.makeService(id, body.servers, true) : null;
    const serviceId = made ?? body.service_id!;
    await this.deps.repository.replaceLocal(
      id,
      (fresh) => {
        if (fresh.source !== 'local') throw resourceErrors.notLocal(id);
        const next = this.record(id, name, body, serviceId);
        // overrides set through the sub-routes stay; the body's fields replace the definition, and
        // `middlewares` the assignments when given (absent keeps them)
        return {
          ...next,
          middlewares: body.middlewares ? next.middlewares : fresh.middlewares,
          external_middlewares: fresh.external_middlewares,
          config: fresh.config,
        };
      },
      ifMatch,
    );
    if (serviceId !== createdServiceId(id)) await this.dropCreatedService(id);
    return this.deps.resources.view(id);
  }

  /** DELETE of a resource (any state when local); a local one's `<id>-service` goes too when unused. */
  async remove(id: string, ifMatch?: string): Promise<void> {
    const local = this.deps.repository.record(id)?.source === 'local';
    await this.deps.resources.remove(id, ifMatch);
    if (local) await this.dropCreatedService(id);
  }

  /** 422 for a body the schema passed but the rules refuse; 404 for unknown references. */
  private check(body: LocalBody): void {
    const problems = localBodyProblems(body);
    if (problems.length > 0) throw validationError(problems);
    if (body.service_id !== undefined) {
      const service = this.deps.services.get(body.service_id);
      if (!service) throw resourceErrors.serviceUnknown(body.service_id);
      if (service.protocol !== 'http')
        throw resourceErrors.serviceProtocol(body.service_id, service.protocol, 'http', '/service_id');
    }
    for (const m of body.middlewares ?? [])
      if (!this.deps.middlewareExists(m.middleware_id)) throw resourceErrors.middlewareUnknown(m.middleware_id);
  }

  private record(id: string, name: string, body: LocalBody, serviceId: string): ResourceRecord {
    return {
      id,
      ...localDefinition(id, body, name, serviceId),
      middlewares: sortAssigned(
        (body.middlewares ?? []).map((m) => ({ id: m.middleware_id, priority: assignmentPriority(m.priority) })),
      ),
      external_middlewares: [],
      config: defaultResourceConfig(),
    };
  }

  /** Creates `<id>-service`, or (PUT) replaces it when it is the one made for this resource. */
  private async makeService(id: string, servers: string[], replace: boolean): Promise<string> {
    const serviceId = createdServiceId(id);
    const existing = this.deps.services.get(serviceId);
    if (existing) {
      if (!replace || existing.description !== createdServiceDescription(id))
        throw resourceErrors.serviceTaken(serviceId);
      await this.deps.services.replace(serviceId, serviceBody(id, servers));
    } else await this.deps.services.create(serviceBody(id, servers));
    return serviceId;
  }

  /** Removes `<id>-service` when it was made for resource `id` and nothing uses it any more. */
  private async dropCreatedService(id: string): Promise<void> {
    const serviceId = createdServiceId(id);
    if (this.deps.services.get(serviceId)?.description !== createdServiceDescription(id)) return;
    try {
      await this.deps.services.remove(serviceId);
    } catch (err) {
      // in use elsewhere (another resource took it as service_id): it stays, which is the point
      if (err instanceof AppError && err.statusCode === 409) {
        this.deps.log.info({ service: serviceId, resource: id }, 'service made for the resource is still used; kept');
        return;
      }
      throw err;
    }
  }
}
