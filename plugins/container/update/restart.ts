/**
 * Restart of a stack container inside a job (API.md §4.20 apply: Traefik reads its static config
 * only at start): Docker's restart, then the update's health wait, as steps `restart` and `health`.
 * Nothing to roll back: the container keeps its settings, only its process starts again.
 */
import type { JobContext, PlannedStep } from '../../jobs/index.ts';
import { describeError, StepFailure } from './docker-ops.ts';
import { asStep, type RecreateRun } from './run.ts';

export const RESTART_STEPS = ['restart', 'health'] as const;

export const restartSteps = (name: string): PlannedStep[] => RESTART_STEPS.map((step) => ({ service: name, step }));

/** Restarts `name` and waits until it is healthy; throws a StepFailure naming the step. */
export async function restartContainer(ctx: JobContext, run: RecreateRun, name: string): Promise<void> {
  const { ops } = run;
  const restart = ctx.step(name, 'restart');
  const container = await ops.inspect(name);
  if (!container) {
    restart.fail(`container ${name} no longer exists`);
    throw new StepFailure(`restart of ${name} failed: the container no longer exists`);
  }
  const id = container.Id.slice(0, 12);
  let step = 'restart';
  try {
    await asStep(restart, `restarting ${name} (${id})`, async () => {
      await ops.restart(container.Id);
      return `restarted ${name} (${id})`;
    });
    step = 'health';
    const health = ctx.step(name, 'health');
    await asStep(health, 'checking health', () =>
      ops.waitHealthy(container.Id, {
        timeoutMs: run.healthTimeoutS * 1000,
        stableMs: run.stableMs,
        signal: ctx.signal,
        say: (message) => health.say(message),
      }),
    );
  } catch (err) {
    throw new StepFailure(`restart of ${name} failed at ${step}: ${describeError(err)}`);
  }
}
