/** Service domain logic (API.md §4.3): manual/template services in the store, discovered ones merged in. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { AppError, errors, validationError, type ErrorDetail } from '../../core/errors/app-error.ts';
import { SLUG } from '../../core/ids.ts';
import type { Collection, StoredObject } from '../../core/store/types.ts';
import type { DiscoveredService, UpstreamState } from '../../model/upstream-state.ts';
import type { TraefikSchema } from '../../model/traefik-schema.ts';
import { checkName, uniqueSlug } from '../../model/ids.ts';
import { ReferenceRegistry, type ReferenceSource } from '../../model/references.ts';
import { serviceErrors } from './errors.ts';
import type {
  Protocol,
  ServiceCreateBody,
  ServiceData,
  ServiceListFilter,
  ServiceReplaceBody,
  ServiceView,
} from './schemas.ts';
import {
  checkServiceConfig,
  definitionOf,
  followsHealth,
  healthReferences,
  serviceReferences,
  type ServiceContext,
  type Target,
} from './validate.ts';
import { discoveredView, storedView } from './views.ts';
import { ifMatchAccepts, matchingVersion } from '../../model/http.ts';
import { isStoreError } from '../../core/store/index.ts';
import { gatedKeyWarnings, nodeAt } from '../../model/traefik-versions.ts';

export interface ServiceManagerOptions {
  schema: TraefikSchema;
  upstream: Pick<UpstreamState, 'hasKey' | 'discoveredServices' | 'current'>;
  /** `validation.allow_unknown_traefik_fields`: unknown Traefik keys become warnings. */
  allowUnknown: boolean;
  /** The collection's directory: hand edits may reference files not read yet (the startup scan, a git pull). */
  dir: string;
  now: () => Date;
  /** Version of the Traefik polling the provider (API.md §4.9 G14), for the `warnings` of newer keys. */
  traefikVersion?: () => string | null;
}

/** A template entry of config/templates/services.yaml (validated like a POST body with an id). */
export type ServiceTemplate = ServiceCreateBody & { id: string };

const SECTIONS = ['http.services', 'tcp.services', 'udp.services'] as const;

export class ServiceManager {
  private collection!: Collection<ServiceData>;
  private readonly references = new ReferenceRegistry();
  // Writes are serialised so name/id checks and the write they guard see the same state.
  private queue: Promise<unknown> = Promise.resolve();
  /** While createMany checks its bodies: those checked so far, which later ones may reference. */
  private pending: Map<string, ServiceData> | null = null;

  constructor(private readonly options: ServiceManagerOptions) {}

  /** Connects the store collection (created after the manager because its hand-edit check calls back here). */
  attach(collection: Collection<ServiceData>): void {
    this.collection = collection;
  }

  /** Registers something that references services (resources); returns the unregister function. */
  addReferenceSource(source: ReferenceSource): () => void {
    return this.references.add(source);
  }

  /** Stored objects as they are (no computed fields): the provider config reads these on every generation. */
  records(): StoredObject<ServiceData>[] {
    return this.collection.list();
  }

  /** Whether any service (manual, template or discovered) has this id. */
  has(id: string): boolean {
    return this.collection.has(id) || this.discovered().has(id);
  }

  /** All services as the API shows them, by id, filtered. */
  list(filter: Omit<ServiceListFilter, 'page' | 'page_size'> = {}): ServiceView[] {
    const q = filter.q?.toLowerCase();
    const index = this.referenceIndex();
    const views = [
      ...this.collection.list().map((o) => this.storedView(o, index.get(o.id) ?? [])),
      ...[...this.discovered().values()].map((d) => this.discoveredView(d)),
    ].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return views.filter(
      (v) =>
        (!filter.status || filter.status === 'all' || v.status === filter.status) &&
        (!filter.source || v.source === filter.source) &&
        (!filter.protocol || v.protocol === filter.protocol) &&
        (!filter.type || v.type === filter.type) &&
        (!q || v.id.includes(q) || v.name.toLowerCase().includes(q)),
    );
  }

  get(id: string): ServiceView | undefined {
    const stored = this.collection.get(id);
    if (stored) return this.storedView(stored, this.referencing(id));
    const discovered = this.discovered().get(id);
    return discovered ? this.discoveredView(discovered) : undefined;
  }

  /** API paths of services and other objects (resources) referencing `id`. */
  usedBy(id: string): string[] {
    return [...new Set([...this.referencing(id), ...this.references.referrers(id)])].sort();
  }

  async create(body: ServiceCreateBody, source: 'manual' | 'template' = 'manual'): Promise<ServiceView> {
    return this.serial(async () => {
      const name = checkName(body.name);
      const protocol = body.protocol ?? 'http';
      const id =
        body.id ??
        uniqueSlug(name, 'service', (c) => this.collection.has(c) || this.discovered().has(c) || this.upstreamKey(c));
      const data = this.checkNew(id, name, protocol, body, source, body.id !== undefined && this.collection.has(id));
      return this.storedView(await this.collection.create(id, data), []);
    });
  }

  /**
   * Creates several services at once, all or nothing (an import): each body is checked as create()
   * checks it, in order, an earlier body counting as existing for a later one's references (and
   * their health); then one batch write (Collection.createMany: a fsync per file, one for the dir).
   */
  async createMany(bodies: (ServiceCreateBody & { id: string })[]): Promise<ServiceView[]> {
    return this.serial(async () => {
      const pending = new Map<string, ServiceData>();
      const names = new Map<string, string>();
      this.pending = pending;
      try {
        for (const body of bodies) {
          const name = checkName(body.name);
          const protocol = body.protocol ?? 'http';
          const id = body.id;
          const data = this.checkNew(id, name, protocol, body, 'manual', this.collection.has(id) || pending.has(id));
          const owner = names.get(name.toLowerCase());
          if (owner) throw serviceErrors.nameTaken(name, owner);
          names.set(name.toLowerCase(), id);
          pending.set(id, data);
        }
      } finally {
        this.pending = null;
      }
      const stored = await this.collection.createMany([...pending].map(([id, data]) => ({ id, data })));
      const index = this.referenceIndex();
      return stored.map((o) => this.storedView(o, index.get(o.id) ?? []));
    });
  }

  /** Deletes several services at once (the undo of createMany): refused (nothing deleted) while one is used outside the set. */
  async removeMany(ids: string[]): Promise<void> {
    await this.serial(async () => {
      const leaving = new Set(ids);
      for (const id of ids) {
        this.existing(id);
        const users = this.usedBy(id).filter(
          (p) => !p.startsWith('/api/services/') || !leaving.has(p.slice('/api/services/'.length)),
        );
        if (users.length > 0) throw serviceErrors.inUse(id, users);
      }
      await this.collection.deleteMany(ids);
    });
  }

  async replace(id: string, body: ServiceReplaceBody, ifMatch?: string): Promise<ServiceView> {
    return this.serial(async () => {
      const current = this.existing(id);
      if (body.id !== undefined && body.id !== id) throw validationError(serviceErrors.idMismatch(body.id, id));
      const name = checkName(body.name);
      const protocol = body.protocol ?? 'http';
      this.assertConfig(id, protocol, body.type, body.config);
      this.assertReferrersHealth(id, protocol, body.type, body.config);
      this.assertNameFree(name, id);
      if (protocol !== (current.data.protocol ?? 'http')) {
        const users = this.usedBy(id);
        if (users.length > 0) throw serviceErrors.protocolInUse(id, users);
      }
      const stored = await this.collection.update(
        id,
        (fresh) => {
          if (!fresh) throw serviceErrors.notFound(id);
          return {
            name,
            type: body.type,
            protocol,
            config: body.config,
            description: body.description ?? '',
            source: fresh.data.source ?? 'manual',
          };
        },
        { expect: matchingVersion(ifMatch) },
      );
      return this.storedView(stored!, this.referencing(id));
    });
  }

  async remove(id: string, options: { ifMatch?: string } = {}): Promise<void> {
    await this.serial(async () => {
      const current = this.existing(id);
      if (!ifMatchAccepts(options.ifMatch, current.etag)) throw errors.preconditionFailed();
      const users = this.usedBy(id);
      if (users.length > 0) throw serviceErrors.inUse(id, users);
      await this.collection.delete(id, { expect: matchingVersion(options.ifMatch) });
    });
  }

  /** Seeds one template as `source: template`: 'skipped' when its id or name is taken; throws (422) when invalid. */
  async seed(template: ServiceTemplate): Promise<'created' | 'skipped'> {
    if (this.has(template.id) || this.nameOwner(template.name.trim(), null)) return 'skipped';
    try {
      await this.create(template, 'template');
      return 'created';
    } catch (err) {
      if ((err instanceof AppError && err.statusCode === 409) || isStoreError(err, 'already_exists')) return 'skipped'; // taken meanwhile, or an upstream key
      throw err;
    }
  }

  /** Hand-edit check of the store (API.md §3.3): same rules as the API; references may be files not yet read. */
  checkFile(id: string, data: ServiceData): ErrorDetail[] {
    const problems: ErrorDetail[] = [];
    try {
      checkName(data.name);
    } catch (err) {
      problems.push(...((err as AppError).details ?? []));
    }
    const onDisk = (ref: string) =>
      SLUG.test(ref) && ['yaml', 'yml'].some((ext) => existsSync(path.join(this.options.dir, `${ref}.${ext}`)));
    const ctx = this.context((ref) => this.target(ref) ?? (onDisk(ref) ? 'unread' : undefined));
    return [...problems, ...checkServiceConfig(id, data.protocol ?? 'http', data.type, data.config, ctx).errors];
  }

  /** The stored service, or 409 read_only (discovered) / 404. */
  private existing(id: string): StoredObject<ServiceData> {
    const stored = this.collection.get(id);
    if (stored) return stored;
    throw this.discovered().has(id) ? serviceErrors.readOnly(id) : serviceErrors.notFound(id);
  }

  private assertConfig(id: string, protocol: Protocol, type: string, config: Record<string, unknown>): void {
    const outcome = checkServiceConfig(
      id,
      protocol,
      type,
      config,
      this.context((ref) => this.target(ref)),
    );
    if (outcome.errors.length > 0) throw validationError(outcome.errors);
  }

  /** create()'s checks of one new service, in this order (`taken`: its id is already used); returns its file data. */
  private checkNew(
    id: string,
    name: string,
    protocol: NonNullable<ServiceData['protocol']>,
    body: ServiceCreateBody,
    source: ServiceData['source'],
    taken: boolean,
  ): ServiceData {
    this.assertConfig(id, protocol, body.type, body.config);
    if (taken) throw serviceErrors.idTaken(id);
    if (this.discovered().has(id)) throw serviceErrors.discoveredId(id);
    if (this.upstreamKey(id)) throw serviceErrors.upstreamKey(id);
    this.assertNameFree(name, null);
    return { name, type: body.type, protocol, config: body.config, description: body.description ?? '', source };
  }

  private assertNameFree(name: string, self: string | null): void {
    const owner = this.nameOwner(name, self);
    if (owner) throw serviceErrors.nameTaken(name, owner);
  }

  private nameOwner(name: string, self: string | null): string | undefined {
    const wanted = name.toLowerCase();
    return this.collection.list().find((o) => o.id !== self && o.data.name.trim().toLowerCase() === wanted)?.id;
  }

  private upstreamKey(id: string): boolean {
    return SECTIONS.some((section) => this.options.upstream.hasKey(section, id));
  }

  /** `depth` bounds the walk through mirroring services (hand edits may hold a cycle). */
  private target(id: string, depth = 0): Target {
    const data = this.collection?.get(id)?.data ?? this.pending?.get(id);
    if (!data) return undefined;
    const lookup = (ref: string): Target => (depth < 32 ? this.target(ref, depth + 1) : 'unread');
    return {
      protocol: data.protocol ?? 'http',
      refs: serviceReferences(data.type, data.config).map((r) => r.name),
      health: followsHealth(data.type, data.config, lookup),
    };
  }

  /**
   * A replacement must keep the health that services referencing it need (healthReferences):
   * removing the healthCheck of a failover's main service would make Traefik disable the failover.
   */
  private assertReferrersHealth(id: string, protocol: Protocol, type: string, config: Record<string, unknown>): void {
    if (protocol !== 'http' || followsHealth(type, config, (ref) => this.target(ref))) return;
    const problems: ErrorDetail[] = [];
    for (const o of this.collection.list()) {
      if (o.id === id || (o.data.protocol ?? 'http') !== 'http') continue;
      if (healthReferences(o.data.type, o.data.config).some((r) => r.name === id))
        problems.push({
          path: '/config/healthCheck',
          message: `the ${o.data.type} service ${o.id} follows this service's health: Traefik disables it and its routers when this service has no healthCheck`,
        });
    }
    if (problems.length > 0) throw validationError(problems);
  }

  private context(lookup: (id: string) => Target): ServiceContext {
    return { schema: this.options.schema, allowUnknown: this.options.allowUnknown, lookup };
  }

  /** Discovered services by id, minus ids a stored service holds (stored wins). */
  private discovered(): Map<string, DiscoveredService> {
    const map = new Map<string, DiscoveredService>();
    for (const d of this.options.upstream.discoveredServices())
      if (!this.collection.has(d.id) && !map.has(d.id)) map.set(d.id, d);
    return map;
  }

  /** Paths of stored services referencing each id (one pass). */
  private referenceIndex(): Map<string, string[]> {
    const index = new Map<string, string[]>();
    for (const o of this.collection.list()) {
      for (const name of new Set(serviceReferences(o.data.type, o.data.config).map((r) => r.name))) {
        index.set(name, [...(index.get(name) ?? []), `/api/services/${o.id}`]);
      }
    }
    return index;
  }

  private referencing(id: string): string[] {
    return this.referenceIndex().get(id) ?? [];
  }

  private storedView(stored: StoredObject<ServiceData>, referencing: string[]): ServiceView {
    const { data } = stored;
    const protocol = data.protocol ?? 'http';
    const definition = definitionOf(protocol, data.type);
    const warnings =
      this.options.allowUnknown && this.options.schema.has(definition)
        ? this.options.schema
            .check(definition, data.config, '/config', `a ${protocol} ${data.type} service`)
            .unknown.map(
              (u) =>
                `${u.path.replace(/^\//, '')} ${u.message}; accepted because validation.allow_unknown_traefik_fields is on`,
            )
        : [];
    warnings.push(
      ...gatedKeyWarnings(
        nodeAt([protocol, 'services', '*', data.type]),
        data.config,
        this.options.traefikVersion?.() ?? null,
      ),
    );
    return storedView(stored, [...new Set([...referencing, ...this.references.referrers(stored.id)])].sort(), warnings);
  }

  private discoveredView(service: DiscoveredService): ServiceView {
    const syncedAt = this.options.upstream.current()?.fetched_at ?? this.options.now().toISOString();
    return discoveredView(service, this.references.referrers(service.id), syncedAt);
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
