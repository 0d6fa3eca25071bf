/**
 * Writes a validated import plan, in dependency order (middlewares, services, then per resource its
 * overrides and assignments: a resource's middleware assignments in one bulk request). All or
 * nothing: when a write fails, every write made before it is undone in reverse order and the
 * failure is answered (API.md §4.24).
 */
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../core/errors/app-error.ts';
import { importErrors } from './errors.ts';
import type { ImportPlan, PlannedAssignment, PlannedMiddleware, PlannedService } from './types.ts';

/**
 * The writes an import makes, through the owning groups (their decorators, or their routes for
 * resources). Middlewares and services are written as one batch each, all or nothing (the groups'
 * createMany: a fsync per file and one for the dir, instead of two fsyncs and a lock per object).
 */
export interface ImportWriter {
  createMiddlewares(ms: PlannedMiddleware[]): Promise<void>;
  removeMiddlewares(ids: string[]): Promise<void>;
  createServices(ss: PlannedService[]): Promise<void>;
  removeServices(ids: string[]): Promise<void>;
  /** One request to /api/resources/…; throws the AppError of a non-2xx answer. */
  resource(method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<void>;
}

type Undo = { what: string; run: () => Promise<void> };

export async function applyPlan(plan: ImportPlan, writer: ImportWriter, log: FastifyBaseLogger): Promise<void> {
  const undo: Undo[] = [];
  const step = async (work: () => Promise<void>, back: Undo) => {
    await work();
    undo.push(back);
  };
  const base = (id: string) => `/api/resources/${encodeURIComponent(id)}`;
  try {
    const middlewareIds = plan.middlewares.map((m) => m.id);
    if (middlewareIds.length > 0)
      await step(() => writer.createMiddlewares(plan.middlewares), {
        what: `${middlewareIds.length} middlewares`,
        run: () => writer.removeMiddlewares(middlewareIds),
      });
    const serviceIds = plan.services.map((s) => s.id);
    if (serviceIds.length > 0)
      await step(() => writer.createServices(plan.services), {
        what: `${serviceIds.length} services`,
        run: () => writer.removeServices(serviceIds),
      });
    for (const o of plan.overrides)
      await step(() => writer.resource('PUT', `${base(o.resource_id)}/config/${o.kind}`, o.config), {
        what: `${o.resource_id} ${o.kind} override`,
        run: () => writer.resource('PUT', `${base(o.resource_id)}/config/${o.kind}`, o.previous),
      });
    for (const run of assignmentRuns(plan.assignments)) {
      if (run.kind === 'middleware')
        // one request per resource (up to 100 assignments): a resource write each, not one per assignment
        await step(
          () =>
            writer.resource('POST', `${base(run.resource_id)}/middlewares/bulk`, {
              middlewares: run.items.map((a) => ({
                middleware_id: a.id,
                ...(a.priority === null ? {} : { priority: a.priority }),
              })),
            }),
          {
            what: `${run.resource_id} middlewares ${run.items.map((a) => a.id).join(', ')}`,
            run: async () => {
              for (const a of [...run.items].reverse())
                await writer.resource('DELETE', `${base(a.resource_id)}/middlewares/${encodeURIComponent(a.id)}`);
            },
          },
        );
      else
        for (const a of run.items)
          await step(() => writer.resource('POST', `${base(a.resource_id)}/service`, { service_id: a.id }), {
            what: `${a.resource_id} service ${a.id}`,
            run: () => writer.resource('DELETE', `${base(a.resource_id)}/service`),
          });
    }
  } catch (err) {
    await rollback(undo, log);
    throw err instanceof AppError ? importErrors.rolledBack(err) : err;
  }
}

/** The bulk route's limit (BulkAssignBody: at most 100 items). */
const BULK_LIMIT = 100;

/** Consecutive assignments of one resource and kind, in plan order (middleware runs of at most BULK_LIMIT). */
function assignmentRuns(
  assignments: PlannedAssignment[],
): { resource_id: string; kind: PlannedAssignment['kind']; items: PlannedAssignment[] }[] {
  const runs: { resource_id: string; kind: PlannedAssignment['kind']; items: PlannedAssignment[] }[] = [];
  for (const a of assignments) {
    const last = runs.at(-1);
    if (last && last.resource_id === a.resource_id && last.kind === a.kind && last.items.length < BULK_LIMIT)
      last.items.push(a);
    else runs.push({ resource_id: a.resource_id, kind: a.kind, items: [a] });
  }
  return runs;
}

/** Undoes in reverse order; an undo that fails is logged and the others still run. */
async function rollback(undo: Undo[], log: FastifyBaseLogger): Promise<void> {
  for (const back of undo.reverse()) {
    try {
      await back.run();
    } catch (err) {
      log.error({ err, what: back.what }, 'import rollback could not undo a write');
    }
  }
  log.warn({ undone: undo.length }, 'import rolled back');
}
