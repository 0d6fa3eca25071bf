/** Provider targets: CRUD over the `targets` collection, ids, names and field checks (docs/API.md "Provider targets"). */
import { validationError, type AppError, type ErrorDetail } from '../../../core/errors/app-error.ts';
import type { Collection, StoredObject } from '../../../core/store/types.ts';
import { checkName, uniqueSlug } from '../../../model/ids.ts';
import { ifMatchAccepts, matchingVersion } from '../../../model/http.ts';
import { errors } from '../../../core/errors/app-error.ts';
import { globProblem } from './globs.ts';
import { targetErrors, RESERVED_IDS } from './errors.ts';
import type { TargetCreateBody, TargetData, TargetReplaceBody, TargetSelection, TargetView } from './schemas.ts';
import { pointerToken } from '../../../core/json-pointer.ts';

export interface TargetServiceOptions {
  resourceExists: (id: string) => boolean;
  middlewareExists: (id: string) => boolean;
  /** Path Traefik polls for a target, e.g. `/api/v1/proxy-config/edge-1`. */
  urlOf: (id: string) => string;
}

/** Traefik entry point names: letters, digits, `-`, `_`, `.` (what Traefik's static config accepts as a map key). */
const ENTRYPOINT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

export class TargetService {
  private collection!: Collection<TargetData>;
  // writes are serialised so name/id checks and the write they guard see the same state
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: TargetServiceOptions) {}

  attach(collection: Collection<TargetData>): void {
    this.collection = collection;
  }

  records(): StoredObject<TargetData>[] {
    return this.collection.list();
  }

  has(id: string): boolean {
    return this.collection.has(id);
  }

  list(): TargetView[] {
    return this.collection.list().map((o) => this.view(o));
  }

  get(id: string): TargetView | undefined {
    const stored = this.collection.get(id);
    return stored ? this.view(stored) : undefined;
  }

  /** API paths of the targets appending middleware `id` (the middlewares group's `used_by` and 409). */
  middlewareReferrers(id: string): { path: string }[] {
    return this.collection
      .list()
      .filter((o) => o.data.middlewares?.includes(id))
      .map((o) => ({ path: `/api/proxy-config/targets/${o.id}` }));
  }

  /** Removes middleware `id` from every target (DELETE /api/middlewares/:id?force=true). */
  async dropMiddleware(id: string): Promise<void> {
    await this.serial(async () => {
      for (const { path } of this.middlewareReferrers(id)) {
        await this.collection.update(path.slice(path.lastIndexOf('/') + 1), (fresh) =>
          fresh ? { ...fresh.data, middlewares: (fresh.data.middlewares ?? []).filter((m) => m !== id) } : undefined,
        );
      }
    });
  }

  async create(body: TargetCreateBody): Promise<TargetView> {
    return this.serial(async () => {
      const data = this.checked(body, true);
      const id = body.id ?? uniqueSlug(data.name, 'target', (c) => this.collection.has(c) || RESERVED_IDS.has(c));
      if (RESERVED_IDS.has(id)) throw validationError([targetErrors.reservedId(id)]);
      if (body.id !== undefined && this.collection.has(id)) throw targetErrors.idTaken(id);
      this.assertNameFree(data.name, null);
      return this.view(await this.collection.create(id, data));
    });
  }

  async replace(id: string, body: TargetReplaceBody, ifMatch?: string): Promise<TargetView> {
    return this.serial(async () => {
      if (!this.collection.has(id)) throw targetErrors.notFound(id);
      if (body.id !== undefined && body.id !== id) throw validationError([targetErrors.idMismatch(body.id, id)]);
      const data = this.checked(body, true);
      this.assertNameFree(data.name, id);
      const stored = await this.collection.update(
        id,
        (fresh) => {
          if (!fresh) throw targetErrors.notFound(id);
          return data;
        },
        { expect: matchingVersion(ifMatch) },
      );
      return this.view(stored!);
    });
  }

  async remove(id: string, ifMatch?: string): Promise<void> {
    await this.serial(async () => {
      const current = this.collection.get(id);
      if (!current) throw targetErrors.notFound(id);
      if (!ifMatchAccepts(ifMatch, current.etag)) throw errors.preconditionFailed();
      await this.collection.delete(id, { expect: matchingVersion(ifMatch) });
    });
  }

  /**
   * Hand-edit check of the store: name and globs as on the API. References to resources and
   * middlewares are not checked here (files are read in any order, discovery may not have run):
   * the status lists them as dangling references while they do not exist.
   */
  checkFile(_id: string, data: TargetData): ErrorDetail[] {
    return this.problems(data, false);
  }

  /** The stored form of a body: trimmed name, only the fields given; throws 422 naming every bad field. */
  private checked(body: TargetCreateBody | TargetReplaceBody, withReferences: boolean): TargetData {
    const problems = this.problems(body, withReferences);
    if (problems.length > 0) throw validationError(problems);
    const data: TargetData = { name: body.name.trim() };
    if (body.description) data.description = body.description;
    if (body.include) data.include = compact(body.include);
    if (body.exclude && (body.exclude.hosts?.length || body.exclude.resources?.length))
      data.exclude = compact(body.exclude);
    if (body.entrypoints && Object.keys(body.entrypoints).length > 0) data.entrypoints = body.entrypoints;
    if (body.middlewares?.length) data.middlewares = [...new Set(body.middlewares)];
    if (body.traefik_version) data.traefik_version = body.traefik_version;
    return data;
  }

  private problems(data: TargetData, withReferences: boolean): ErrorDetail[] {
    const problems: ErrorDetail[] = [];
    try {
      checkName(data.name);
    } catch (err) {
      problems.push(...((err as AppError).details ?? []));
    }
    if (data.include && !data.include.hosts?.length && !data.include.resources?.length)
      problems.push({
        path: '/include',
        message: 'must list at least one host glob or resource id; leave include out to select every resource',
      });
    for (const part of ['include', 'exclude'] as const) {
      data[part]?.hosts?.forEach((glob, i) => {
        const problem = globProblem(glob);
        if (problem) problems.push({ path: `/${part}/hosts/${i}`, message: problem });
      });
      if (!withReferences) continue;
      data[part]?.resources?.forEach((id, i) => {
        if (!this.options.resourceExists(id))
          problems.push({ path: `/${part}/resources/${i}`, message: `resource ${id} does not exist` });
      });
    }
    for (const [from, to] of Object.entries(data.entrypoints ?? {})) {
      for (const name of [from, to])
        if (!ENTRYPOINT.test(name))
          problems.push({
            path: `/entrypoints/${pointerToken(from)}`,
            message: `"${name.slice(0, 100)}" is not an entry point name (letters, digits, "-", "_", ".")`,
          });
    }
    if (withReferences)
      data.middlewares?.forEach((id, i) => {
        if (!this.options.middlewareExists(id))
          problems.push({ path: `/middlewares/${i}`, message: `middleware ${id} does not exist` });
      });
    return problems;
  }

  private assertNameFree(name: string, self: string | null): void {
    const wanted = name.toLowerCase();
    const owner = this.collection.list().find((o) => o.id !== self && o.data.name.trim().toLowerCase() === wanted)?.id;
    if (owner) throw targetErrors.nameTaken(name, owner);
  }

  private view(stored: StoredObject<TargetData>): TargetView {
    const { data } = stored;
    const full = (s: TargetSelection | undefined) => ({ hosts: s?.hosts ?? [], resources: s?.resources ?? [] });
    return {
      id: stored.id,
      name: data.name,
      description: data.description ?? '',
      include: data.include ? full(data.include) : null,
      exclude: full(data.exclude),
      entrypoints: data.entrypoints ?? {},
      middlewares: data.middlewares ?? [],
      traefik_version: data.traefik_version ?? null,
      url: this.options.urlOf(stored.id),
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

function compact(selection: TargetSelection): TargetSelection {
  const out: TargetSelection = {};
  if (selection.hosts?.length) out.hosts = [...new Set(selection.hosts.map((h) => h.toLowerCase()))];
  if (selection.resources?.length) out.resources = [...new Set(selection.resources)];
  return out;
}
