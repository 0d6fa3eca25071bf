/**
 * Jobs of other groups on stack containers (API.md §4.20 apply), on the update machinery: the same
 * steps, health wait and rollback as an update (run.ts), restarts with a health wait (restart.ts),
 * and the update service's rule of one such job at a time with its containers held.
 */
import type { AppConfig } from '../../../core/config/schema.ts';
import type { StackJobs, StackJobTools } from '../types.ts';
import { dockerConfigured } from '../docker-client.ts';
import { recreateSteps } from './plan.ts';
import { restartContainer, restartSteps } from './restart.ts';
import { recreateUnit, type RecreateRun } from './run.ts';
import type { UpdateService } from './service.ts';

export interface StackJobsOptions {
  updates: UpdateService;
  dockerConfig: AppConfig['docker'];
  /** `containers.update_stable_s`: without a healthcheck, healthy = running this long. */
  stableS: number;
  now: () => Date;
}

/** The StackJobs other groups get as `app.stackJobs`. */
export function stackJobs(options: StackJobsOptions): StackJobs {
  const { updates } = options;
  return {
    configured: () => dockerConfigured(options.dockerConfig),
    plan: (services) => updates.plan(services),
    matchServices: (services) => updates.matchServices(services),
    recreateSteps,
    restartSteps,
    start(spec, work) {
      const run: RecreateRun = {
        healthTimeoutS: spec.healthTimeoutS,
        ops: updates.docker,
        stableMs: options.stableS * 1000,
        now: options.now,
      };
      // `container:<id>` modes of later units follow replacements made earlier in this job
      const replaced = new Map<string, string>();
      return updates.startHeld({ kind: spec.kind, params: spec.params, steps: spec.steps }, spec.members, (ctx) => {
        const tools: StackJobTools = {
          ctx,
          inspect: (name) => run.ops.inspect(name),
          async recreate(unit, configure) {
            const old = await run.ops.inspect(unit.name);
            if (!old) {
              ctx.step(unit.name, 'rename').fail(`container ${unit.name} no longer exists`);
              throw new Error(`recreation of ${unit.name} failed: the container no longer exists`);
            }
            await recreateUnit(ctx, run, unit, old, { label: 'recreation', configure, replaced });
          },
          restart: (name) => restartContainer(ctx, run, name),
        };
        return work(tools);
      });
    },
  };
}
