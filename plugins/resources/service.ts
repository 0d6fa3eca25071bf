/**
 * Resource domain logic (API.md §4.4): reads with computed fields, and every override write. Each
 * write re-reads the resource under the collection lock, so the checks (disabled → 409, not
 * assigned → 404) see the same state as the write they guard.
 */
import type { ResourceRecord } from '../../model/upstream-routers.ts';
import type { ServiceView } from '../services/schemas.ts';
import { canonicalConfig, checkConfig, type ConfigContext } from './config-rules.ts';
import type { ConfigBody, ConfigKind } from '../../model/resource-config.ts';
import { outcomesFor, type EffectiveInputs } from './effective.ts';
import { overlapWarnings } from './local.ts';
import { resourceErrors } from './errors.ts';
import { assignmentPriority, sortAssigned, sortExternal, type Overrides } from './record.ts';
import type { ResourceRepository } from './repository.ts';
import type { AssignBodyType, BulkAssignBodyType, ExternalBodyType, ResourceListFilter } from './schemas.ts';
import { matchesFilter, viewOf, type ResourceView } from './views.ts';
import type { ResourceLive } from '../../model/live/types.ts';

export interface ResourceServiceDeps {
  repository: ResourceRepository;
  effective: EffectiveInputs;
  middlewareExists(id: string): boolean;
  /** Any service (manual, template or discovered) as the services group shows it. */
  service(id: string): ServiceView | undefined;
  mtlsUnavailable(): string | null;
  /** The resource's live status (API.md §4.19). */
  live(id: string): ResourceLive;
}

const overridesOf = (r: ResourceRecord): Overrides => ({
  middlewares: r.middlewares,
  external_middlewares: r.external_middlewares,
  service_id: r.service_id,
  config: r.config,
});

/** Throws 409 conflict unless the resource is active (settings change only while it is). */
function requireActive(record: ResourceRecord): void {
  if (record.status !== 'active') throw resourceErrors.disabled(record.id);
}

export class ResourceService {
  private readonly configContext: ConfigContext;

  constructor(private readonly deps: ResourceServiceDeps) {
    this.configContext = {
      serviceProtocol: (id) => deps.service(id)?.protocol,
      mtlsUnavailable: () => deps.mtlsUnavailable(),
    };
  }

  /** Resources by id, filtered, with computed fields (one generator run for the page). */
  list(filter: Omit<ResourceListFilter, 'page' | 'page_size'> = {}): ResourceView[] {
    const { live } = filter;
    return this.views(
      this.deps.repository
        .records()
        .filter((r) => matchesFilter(r, filter) && (!live || this.deps.live(r.id).state === live)),
    );
  }

  get(id: string): ResourceView | undefined {
    const record = this.deps.repository.record(id);
    return record ? this.views([record])[0] : undefined;
  }

  /** The view of an existing resource, or 404. */
  view(id: string): ResourceView {
    const found = this.get(id);
    if (!found) throw resourceErrors.notFound(id);
    return found;
  }

  /** DELETE: disabled or local resources; the file (and with it every assignment) goes. */
  async remove(id: string, ifMatch?: string): Promise<void> {
    await this.deps.repository.delete(
      id,
      (record) => {
        if (record.status === 'active' && record.source !== 'local') throw resourceErrors.stillActive(id);
      },
      ifMatch,
    );
  }

  async assignMiddleware(id: string, body: AssignBodyType, ifMatch?: string): Promise<ResourceView> {
    if (!this.deps.repository.record(id)) throw resourceErrors.notFound(id);
    if (!this.deps.middlewareExists(body.middleware_id)) throw resourceErrors.middlewareUnknown(body.middleware_id);
    return this.write(id, ifMatch, (record) => {
      requireActive(record);
      return { middlewares: upsertAssigned(record.middlewares, [body]) };
    });
  }

  /** All or nothing: every unknown id is listed in one 422 and nothing is applied. */
  async bulkAssign(id: string, body: BulkAssignBodyType, ifMatch?: string): Promise<ResourceView> {
    const unknown = body.middlewares
      .map((item, index) => ({ item, index }))
      .filter(({ item }) => !this.deps.middlewareExists(item.middleware_id))
      .map(({ item, index }) => ({
        path: `/middlewares/${index}/middleware_id`,
        message: `middleware ${item.middleware_id} does not exist`,
      }));
    return this.write(id, ifMatch, (record) => {
      requireActive(record);
      if (unknown.length > 0) throw resourceErrors.middlewaresUnknown(unknown);
      return { middlewares: upsertAssigned(body.replace ? [] : record.middlewares, body.middlewares) };
    });
  }

  async unassignMiddleware(id: string, middlewareId: string, ifMatch?: string): Promise<void> {
    await this.write(id, ifMatch, (record) => {
      if (!record.middlewares.some((m) => m.id === middlewareId))
        throw resourceErrors.middlewareNotAssigned(id, middlewareId);
      return { middlewares: record.middlewares.filter((m) => m.id !== middlewareId) };
    });
  }

  /** External references, priority descending then name. */
  externals(id: string): ResourceRecord['external_middlewares'] {
    const record = this.deps.repository.record(id);
    if (!record) throw resourceErrors.notFound(id);
    return sortExternal(record.external_middlewares);
  }

  /** Upsert by `name`. */
  async upsertExternal(id: string, body: ExternalBodyType, ifMatch?: string): Promise<ResourceView> {
    const entry = { name: body.name, priority: assignmentPriority(body.priority), provider: body.provider ?? null };
    return this.write(id, ifMatch, (record) => {
      requireActive(record);
      return {
        external_middlewares: sortExternal([...record.external_middlewares.filter((e) => e.name !== body.name), entry]),
      };
    });
  }

  async removeExternal(id: string, name: string, ifMatch?: string): Promise<void> {
    await this.write(id, ifMatch, (record) => {
      if (!record.external_middlewares.some((e) => e.name === name)) throw resourceErrors.externalNotFound(id, name);
      return { external_middlewares: record.external_middlewares.filter((e) => e.name !== name) };
    });
  }

  /** GET /service: the assignment and the service (null when it no longer exists). */
  serviceAssignment(id: string): { resource_id: string; service_id: string; service: ServiceView | null } {
    const record = this.deps.repository.record(id);
    if (!record) throw resourceErrors.notFound(id);
    if (record.service_id === null) throw resourceErrors.noService(id);
    return { resource_id: id, service_id: record.service_id, service: this.deps.service(record.service_id) ?? null };
  }

  async assignService(id: string, serviceId: string, ifMatch?: string): Promise<ResourceView> {
    if (!this.deps.repository.record(id)) throw resourceErrors.notFound(id);
    const service = this.deps.service(serviceId);
    if (!service) throw resourceErrors.serviceUnknown(serviceId);
    if (service.protocol !== 'http')
      throw resourceErrors.serviceProtocol(serviceId, service.protocol, 'http', '/service_id');
    return this.write(id, ifMatch, (record) => {
      requireActive(record);
      return { service_id: serviceId };
    });
  }

  async removeService(id: string, ifMatch?: string): Promise<void> {
    await this.write(id, ifMatch, (record) => {
      if (record.service_id === null) throw resourceErrors.noService(id);
      // a local router has no upstream service to go back to
      if (record.source === 'local') throw resourceErrors.localNeedsService(id);
      return { service_id: null };
    });
  }

  /** PUT /config/<kind>: replaces that whole sub-object. */
  async putConfig<K extends ConfigKind>(
    kind: K,
    id: string,
    body: ConfigBody<K>,
    ifMatch?: string,
  ): Promise<ResourceView> {
    const value = canonicalConfig(kind, body);
    return this.write(id, ifMatch, (record) => {
      requireActive(record);
      checkConfig(kind, value, record, this.configContext);
      return { config: { ...record.config, [kind]: value } };
    });
  }

  /** API paths of resources assigning middleware `middlewareId` (reference source of the middlewares group). */
  middlewareReferrers(middlewareId: string): { path: string }[] {
    return this.deps.repository
      .records()
      .filter((r) => r.middlewares.some((m) => m.id === middlewareId))
      .map((r) => ({ path: `/api/resources/${r.id}` }));
  }

  /** DELETE /api/middlewares/:id?force=true: drops every assignment of it. */
  async dropMiddleware(middlewareId: string): Promise<void> {
    for (const { path } of this.middlewareReferrers(middlewareId)) {
      await this.write(path.split('/').pop()!, undefined, (record) => ({
        middlewares: record.middlewares.filter((m) => m.id !== middlewareId),
      }));
    }
  }

  /** API paths of resources using service `serviceId` as `service_id` or `config.tcp.service_id`. */
  serviceReferrers(serviceId: string): { path: string }[] {
    return this.deps.repository
      .records()
      .filter((r) => r.service_id === serviceId || r.config.tcp.service_id === serviceId)
      .map((r) => ({ path: `/api/resources/${r.id}` }));
  }

  /** Drops every use of a service (for a forced delete by the services group). */
  async dropService(serviceId: string): Promise<void> {
    for (const { path } of this.serviceReferrers(serviceId)) {
      await this.write(path.split('/').pop()!, undefined, (record) => ({
        service_id: record.service_id === serviceId ? null : record.service_id,
        config:
          record.config.tcp.service_id === serviceId
            ? { ...record.config, tcp: { ...record.config.tcp, service_id: null } }
            : record.config,
      }));
    }
  }

  private async write(
    id: string,
    ifMatch: string | undefined,
    change: (record: ResourceRecord) => Partial<Overrides>,
  ): Promise<ResourceView> {
    await this.deps.repository.updateOverrides(
      id,
      (record) => ({ ...overridesOf(record), ...change(record) }),
      ifMatch,
    );
    return this.view(id);
  }

  private views(records: ResourceRecord[]): ResourceView[] {
    const outcomes = outcomesFor(this.deps.effective, records);
    const { repository } = this.deps;
    const all = records.some((r) => r.source === 'local') ? repository.records() : [];
    return records.map((record) => {
      const outcome = outcomes.get(record.id);
      const overlaps = overlapWarnings(record, all);
      return viewOf(
        record,
        repository.stored(record.id)!,
        repository.etag(record.id)!,
        outcome && overlaps.length > 0 ? { ...outcome, warnings: [...outcome.warnings, ...overlaps] } : outcome,
        this.deps.live(record.id),
      );
    });
  }
}

/** Upserts assignments by middleware id (later items win), sorted priority desc then id. */
function upsertAssigned(
  current: ResourceRecord['middlewares'],
  items: AssignBodyType[],
): ResourceRecord['middlewares'] {
  const byId = new Map(current.map((m) => [m.id, m]));
  for (const item of items)
    byId.set(item.middleware_id, { id: item.middleware_id, priority: assignmentPriority(item.priority) });
  return sortAssigned([...byId.values()]);
}
