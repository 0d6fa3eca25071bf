/** Middleware domain logic (API.md §4.2): CRUD over the store, ids, names, rules, references. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { AppError, errors, validationError, type ErrorDetail } from '../../core/errors/app-error.ts';
import { SLUG } from '../../core/ids.ts';
import type { Collection, StoredObject } from '../../core/store/types.ts';
import type { UpstreamState } from '../../model/upstream-state.ts';
import { checkName, uniqueSlug } from '../../model/ids.ts';
import { ReferenceRegistry, type ReferenceSource } from '../../model/references.ts';
import { middlewareErrors } from './errors.ts';
import type {
  MiddlewareCreateBody,
  MiddlewareData,
  MiddlewareListFilter,
  MiddlewareReplaceBody,
  MiddlewareView,
} from './schemas.ts';
import type { StaticConfigReader } from '../../model/static-config.ts';
import type { TraefikSchema } from '../../model/traefik-schema.ts';
import { chainMembers, checkMiddlewareConfig, middlewareWarnings, type MiddlewareContext } from './validate.ts';
import { ifMatchAccepts, matchingVersion } from '../../model/http.ts';
import { gatedKeyWarnings, nodeAt } from '../../model/traefik-versions.ts';
import { isStoreError } from '../../core/store/index.ts';

export interface MiddlewareServiceOptions {
  schema: TraefikSchema;
  staticConfig: StaticConfigReader;
  upstream: Pick<UpstreamState, 'hasKey'>;
  /** `validation.allow_unknown_traefik_fields`: unknown Traefik keys become warnings. */
  allowUnknown: boolean;
  /** The collection's directory: hand edits may reference files not read yet (the startup scan, a git pull). */
  dir: string;
  /** Version of the Traefik polling the provider (API.md §4.9 G14), for the `warnings` of newer keys. */
  traefikVersion?: () => string | null;
}

/** A template entry of config/templates/middlewares.yaml (validated like a POST body with an id). */
export type MiddlewareTemplate = MiddlewareCreateBody & { id: string };

export class MiddlewareService {
  private collection!: Collection<MiddlewareData>;
  private readonly references = new ReferenceRegistry();
  // Writes are serialised so name/id checks and the write they guard see the same state.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: MiddlewareServiceOptions) {}

  /** Connects the store collection (created after the service because its hand-edit check calls back here). */
  attach(collection: Collection<MiddlewareData>): void {
    this.collection = collection;
  }

  /** Registers something that references middlewares (resources); returns the unregister function. */
  addReferenceSource(source: ReferenceSource): () => void {
    return this.references.add(source);
  }

  /** Stored objects as they are (no computed fields): the provider config reads these on every generation. */
  records(): StoredObject<MiddlewareData>[] {
    return this.collection.list();
  }

  has(id: string): boolean {
    return this.collection.has(id);
  }

  /** Middlewares as the API shows them, by id, filtered by `type` and `q`. */
  list(filter: Pick<MiddlewareListFilter, 'type' | 'q'> = {}): MiddlewareView[] {
    const q = filter.q?.toLowerCase();
    const listers = this.chainIndex();
    return this.collection
      .list()
      .filter(
        (o) =>
          (!filter.type || o.data.type === filter.type) &&
          (!q || o.id.includes(q) || o.data.name.toLowerCase().includes(q)),
      )
      .map((o) => this.view(o, listers.get(o.id) ?? []));
  }

  get(id: string): MiddlewareView | undefined {
    const stored = this.collection.get(id);
    return stored ? this.view(stored, this.chainsListing(id)) : undefined;
  }

  /** API paths of chains and other objects (resources) referencing `id`. */
  usedBy(id: string): string[] {
    return [...new Set([...this.chainsListing(id), ...this.references.referrers(id)])].sort();
  }

  async create(body: MiddlewareCreateBody): Promise<MiddlewareView> {
    return this.serial(async () => {
      const name = checkName(body.name);
      const id =
        body.id ??
        uniqueSlug(
          name,
          'middleware',
          (c) => this.collection.has(c) || this.options.upstream.hasKey('http.middlewares', c),
        );
      this.assertConfig(id, body.type, body.config);
      if (body.id !== undefined && this.collection.has(id)) throw middlewareErrors.idTaken(id);
      if (this.options.upstream.hasKey('http.middlewares', id)) throw middlewareErrors.upstreamKey(id);
      this.assertNameFree(name, null);
      const stored = await this.collection.create(id, {
        name,
        type: body.type,
        config: body.config,
        description: body.description ?? '',
      });
      return this.view(stored, this.chainsListing(id));
    });
  }

  /**
   * Creates several middlewares at once, all or nothing (an import): each body is checked as
   * create() checks it, in order, an earlier body counting as existing for a later one's chain;
   * then one batch write (Collection.createMany: a fsync per file, one for the dir). Ids are required.
   */
  async createMany(bodies: (MiddlewareCreateBody & { id: string })[]): Promise<MiddlewareView[]> {
    return this.serial(async () => {
      const pending = new Map<string, MiddlewareData>();
      const names = new Map<string, string>();
      for (const body of bodies) {
        const name = checkName(body.name);
        const id = body.id;
        const data: MiddlewareData = {
          name,
          type: body.type,
          config: body.config,
          description: body.description ?? '',
        };
        const outcome = checkMiddlewareConfig(id, body.type, body.config, {
          ...this.context((member) => this.collection.has(member) || pending.has(member)),
          membersOf: (member) => {
            const o = pending.get(member) ?? this.collection.get(member)?.data;
            return o ? chainMembers(o.type, o.config) : [];
          },
        });
        if (outcome.errors.length > 0) throw validationError(outcome.errors);
        if (this.collection.has(id) || pending.has(id)) throw middlewareErrors.idTaken(id);
        if (this.options.upstream.hasKey('http.middlewares', id)) throw middlewareErrors.upstreamKey(id);
        this.assertNameFree(name, null);
        const owner = names.get(name.toLowerCase());
        if (owner) throw middlewareErrors.nameTaken(name, owner);
        names.set(name.toLowerCase(), id);
        pending.set(id, data);
      }
      const stored = await this.collection.createMany([...pending].map(([id, data]) => ({ id, data })));
      const listers = this.chainIndex();
      return stored.map((o) => this.view(o, listers.get(o.id) ?? []));
    });
  }

  /**
   * Deletes several middlewares at once (the undo of createMany): refused (nothing deleted) while a
   * chain outside the set lists one; with `force`, resource assignments of them are removed first.
   */
  async removeMany(ids: string[], options: { force?: boolean } = {}): Promise<void> {
    await this.serial(async () => {
      const leaving = new Set(ids);
      for (const id of ids) {
        if (!this.collection.has(id)) throw middlewareErrors.notFound(id);
        const chains = this.chainsListing(id).filter((p) => !leaving.has(p.slice('/api/middlewares/'.length)));
        if (chains.length > 0) throw middlewareErrors.usedByChains(id, chains);
        const others = this.references.referrers(id);
        if (others.length > 0 && !options.force) throw middlewareErrors.usedByResources(id, others);
      }
      for (const id of ids) {
        if (this.references.referrers(id).length === 0) continue;
        await this.references.removeAll(id);
        const left = this.references.referrers(id);
        if (left.length > 0) throw middlewareErrors.usedByResources(id, left);
      }
      await this.collection.deleteMany(ids);
    });
  }

  async replace(id: string, body: MiddlewareReplaceBody, ifMatch?: string): Promise<MiddlewareView> {
    return this.serial(async () => {
      if (!this.collection.has(id)) throw middlewareErrors.notFound(id);
      if (body.id !== undefined && body.id !== id) throw validationError(middlewareErrors.idMismatch(body.id, id));
      const name = checkName(body.name);
      this.assertConfig(id, body.type, body.config);
      this.assertNameFree(name, id);
      const data: MiddlewareData = { name, type: body.type, config: body.config, description: body.description ?? '' };
      const stored = await this.collection.update(
        id,
        (fresh) => {
          if (!fresh) throw middlewareErrors.notFound(id);
          return data;
        },
        { expect: matchingVersion(ifMatch) },
      );
      return this.view(stored!, this.chainsListing(id));
    });
  }

  /** Deletes; with `force`, assignments held by reference sources are removed first (chains always block). */
  async remove(id: string, options: { force?: boolean; ifMatch?: string } = {}): Promise<void> {
    await this.serial(async () => {
      const current = this.collection.get(id);
      if (!current) throw middlewareErrors.notFound(id);
      if (!ifMatchAccepts(options.ifMatch, current.etag)) throw errors.preconditionFailed();
      const chains = this.chainsListing(id);
      const others = this.references.referrers(id);
      if (others.length > 0 && !options.force)
        throw middlewareErrors.usedByResources(id, [...new Set([...chains, ...others])].sort());
      if (chains.length > 0) throw middlewareErrors.usedByChains(id, chains);
      if (others.length > 0) {
        await this.references.removeAll(id);
        const left = this.references.referrers(id);
        if (left.length > 0) throw middlewareErrors.usedByResources(id, left);
      }
      await this.collection.delete(id, { expect: matchingVersion(options.ifMatch) });
    });
  }

  /** Seeds one template: 'skipped' when its id or name is taken; throws (422) when it is invalid. */
  async seed(template: MiddlewareTemplate): Promise<'created' | 'skipped'> {
    if (this.collection.has(template.id) || this.nameOwner(template.name.trim(), null)) return 'skipped';
    try {
      await this.create(template);
      return 'created';
    } catch (err) {
      if ((err instanceof AppError && err.statusCode === 409) || isStoreError(err, 'already_exists')) return 'skipped'; // taken meanwhile, or an upstream key
      throw err;
    }
  }

  /** Hand-edit check of the store (API.md §3.3): same rules as the API; members may be files not yet read. */
  checkFile(id: string, data: MiddlewareData): ErrorDetail[] {
    const problems: ErrorDetail[] = [];
    try {
      checkName(data.name);
    } catch (err) {
      problems.push(...((err as AppError).details ?? []));
    }
    const onDisk = (member: string) =>
      SLUG.test(member) && ['yaml', 'yml'].some((ext) => existsSync(path.join(this.options.dir, `${member}.${ext}`)));
    const ctx = this.context((member) => (this.collection?.has(member) ?? false) || onDisk(member));
    return [...problems, ...checkMiddlewareConfig(id, data.type, data.config, ctx).errors];
  }

  private assertConfig(id: string, type: string, config: Record<string, unknown>): void {
    const outcome = checkMiddlewareConfig(
      id,
      type,
      config,
      this.context((member) => this.collection.has(member)),
    );
    if (outcome.errors.length > 0) throw validationError(outcome.errors);
  }

  private assertNameFree(name: string, self: string | null): void {
    const owner = this.nameOwner(name, self);
    if (owner) throw middlewareErrors.nameTaken(name, owner);
  }

  private nameOwner(name: string, self: string | null): string | undefined {
    const wanted = name.toLowerCase();
    return this.collection.list().find((o) => o.id !== self && o.data.name.trim().toLowerCase() === wanted)?.id;
  }

  private context(exists: (id: string) => boolean): MiddlewareContext {
    return {
      schema: this.options.schema,
      allowUnknown: this.options.allowUnknown,
      exists,
      membersOf: (id) => {
        const o = this.collection?.get(id);
        return o ? chainMembers(o.data.type, o.data.config) : [];
      },
    };
  }

  /** Chain paths listing each member id (one pass over all chains). */
  private chainIndex(): Map<string, string[]> {
    const index = new Map<string, string[]>();
    for (const o of this.collection.list()) {
      for (const member of new Set(chainMembers(o.data.type, o.data.config))) {
        index.set(member, [...(index.get(member) ?? []), `/api/middlewares/${o.id}`]);
      }
    }
    return index;
  }

  private chainsListing(id: string): string[] {
    return this.collection
      .list()
      .filter((o) => chainMembers(o.data.type, o.data.config).includes(id))
      .map((o) => `/api/middlewares/${o.id}`);
  }

  private view(stored: StoredObject<MiddlewareData>, chains: string[]): MiddlewareView {
    const { data } = stored;
    const tolerated = this.options.allowUnknown
      ? this.options.schema.check(`${data.type}Middleware`, data.config, '/config', `the ${data.type} middleware`)
          .unknown
      : [];
    return {
      id: stored.id,
      name: data.name,
      type: data.type,
      config: data.config,
      description: data.description ?? '',
      used_by: [...new Set([...chains, ...this.references.referrers(stored.id)])].sort(),
      warnings: [
        ...middlewareWarnings(data.type, data.config, tolerated, () => this.options.staticConfig.declaredPlugins()),
        ...gatedKeyWarnings(
          nodeAt(['http', 'middlewares', '*', data.type]),
          data.config,
          this.options.traefikVersion?.() ?? null,
        ),
      ],
      created_at: stored.created_at,
      updated_at: stored.updated_at,
      etag: stored.etag,
    };
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
