/**
 * The import from middleware-manager (API.md §4.24): read its database, plan against our objects,
 * and (unless a dry run) write the plan all or nothing.
 */
import type { FastifyBaseLogger } from 'fastify';
import { applyPlan, type ImportWriter } from './apply.ts';
import { MmDatabaseReader } from './mm-database.ts';
import { planMiddlewares } from './plan-objects.ts';
import { planServices } from './plan-services.ts';
import { planResources, protocols } from './plan-resources.ts';
import type { ImportReportBody } from './schemas.ts';
import type { ImportPlan, OurState } from './types.ts';

export interface ImportServiceOptions {
  /** Our objects, read at each import (after the previous import's writes). */
  state(): OurState;
  log: FastifyBaseLogger;
}

export class ImportService {
  private readonly reader = new MmDatabaseReader();
  // one import at a time: the second plans against what the first wrote
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ImportServiceOptions) {}

  async importDatabase(bytes: Buffer, dryRun: boolean, writer: ImportWriter): Promise<ImportReportBody> {
    const database = await this.reader.read(bytes);
    const run = this.queue.then(async () => {
      const plan = this.plan(database, this.options.state());
      if (!dryRun) await applyPlan(plan, writer, this.options.log);
      this.options.log.info(
        {
          dry_run: dryRun,
          middlewares: plan.middlewares.length,
          services: plan.services.length,
          assignments: plan.assignments.length,
          overrides: plan.overrides.length,
          skipped: plan.skipped.length,
        },
        'middleware-manager import',
      );
      return report(plan, dryRun);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private plan(database: Awaited<ReturnType<MmDatabaseReader['read']>>, ours: OurState): ImportPlan {
    const plan: ImportPlan = {
      middlewares: [],
      services: [],
      assignments: [],
      overrides: [],
      skipped: [],
      warnings: [...database.warnings],
    };
    const middlewares = planMiddlewares(database.middlewares, ours, plan.skipped, plan.warnings);
    const services = planServices(database.services, ours, plan.skipped, plan.warnings);
    plan.middlewares = middlewares.planned;
    plan.services = services.planned;
    planResources(
      {
        resources: database.resources,
        assignments: database.assignments,
        serviceAssignments: database.serviceAssignments,
        mmMiddlewares: new Set(database.middlewares.map((m) => String(m.id))),
        mmServices: new Set(database.services.map((s) => String(s.id))),
        middlewareIds: middlewares.ids,
        serviceIds: services.ids,
        protocolOf: protocols(services.planned, ours.services),
      },
      ours.resources,
      plan,
    );
    return plan;
  }
}

function report(plan: ImportPlan, dryRun: boolean): ImportReportBody {
  return {
    dry_run: dryRun,
    created: {
      middlewares: plan.middlewares.map(({ id, name, type, from }) => ({ id, name, type, from })),
      services: plan.services.map(({ id, name, type, protocol, from }) => ({ id, name, type, protocol, from })),
      assignments: plan.assignments,
      overrides: plan.overrides.map(({ resource_id, kind, config, from }) => ({ resource_id, kind, config, from })),
    },
    skipped: plan.skipped,
    warnings: plan.warnings,
  };
}
