/**
 * One update job (API.md §4.11): optional `pre-update` backup, then per service pull → rename →
 * create → start → health (its network-namespace dependants likewise) → cleanup. A failure after a
 * rename rolls the whole unit back (remove new, rename old back, start it) and fails the job, so
 * the services after it are skipped.
 */
import type Docker from 'dockerode';
import type { JobContext, StepHandle } from '../../jobs/index.ts';
import { networkTargetOf, recreateRequest } from './create-options.ts';
import { describeError, registryOf, StepFailure, type UpdateDocker } from './docker-ops.ts';
import { REPLACE_STEPS, type PlannedUnit } from './plan.ts';

/** What replacing or restarting a container needs (an update, or another group's stack job). */
export interface RecreateRun {
  healthTimeoutS: number;
  ops: UpdateDocker;
  /** Without a healthcheck, "healthy" = running this long. */
  stableMs: number;
  now: () => Date;
}

export interface UpdateRun extends RecreateRun {
  units: PlannedUnit[];
  backup: boolean;
  /** Takes the `pre-update` backup, answers its id. */
  takeBackup: (note: string) => Promise<string>;
}

/**
 * Changes the create request of a unit's own replacement (not its dependants'), e.g. new published
 * ports; answers a note for the `create` step's message, or null.
 */
export type ConfigureCreate = (
  create: Docker.ContainerCreateOptions,
  old: Docker.ContainerInspectInfo,
) => string | null;

export interface RecreateOptions {
  /** what the job does, for the failure sentence: "update" → "update of gerbil failed at health: …" */
  label: string;
  configure?: ConfigureCreate;
  /** old id → new id of containers replaced earlier in the job (`container:<id>` modes follow them) */
  replaced?: Map<string, string>;
}

/** A container replaced in this unit: what rollback and cleanup need. */
interface Replacement {
  name: string;
  oldId: string;
  oldName: string;
  wasRunning: boolean;
  newId: string | null;
}

const short = (id: string) => id.replace(/^sha256:/, '').slice(0, 12);

/** Runs `work` as `step`: begin, then ok with its answer, or fail with the error's sentence. */
export async function asStep(handle: StepHandle, begin: string, work: () => Promise<string>): Promise<void> {
  handle.begin(begin);
  try {
    handle.ok(await work());
  } catch (err) {
    handle.fail(describeError(err));
    throw err;
  }
}

export async function runUpdate(ctx: JobContext, run: UpdateRun): Promise<void> {
  if (run.backup) {
    const services = run.units.map((u) => u.name).join(', ');
    await asStep(ctx.step(null, 'backup'), 'taking a pre-update backup of the data dir', async () => {
      try {
        return `backup ${await run.takeBackup(`before updating ${services} (${ctx.id})`)} created`;
      } catch (err) {
        throw new StepFailure(`pre-update backup failed, nothing was changed: ${describeError(err)}`);
      }
    });
  }
  // `container:<id>` modes of later services must follow replacements made earlier in this job
  const replaced = new Map<string, string>();
  for (const unit of run.units) await updateUnit(ctx, run, unit, replaced);
}

async function updateUnit(
  ctx: JobContext,
  run: UpdateRun,
  unit: PlannedUnit,
  replaced: Map<string, string>,
): Promise<void> {
  const { ops } = run;
  const old = await ops.inspect(unit.name);
  const pull = ctx.step(unit.name, 'pull');
  if (!old) {
    pull.fail(`container ${unit.name} no longer exists`);
    throw new StepFailure(`update of ${unit.name} failed at pull: the container no longer exists`);
  }
  const reference = old.Config.Image;
  let upToDate = false;
  try {
    await asStep(pull, `pulling ${reference} from ${registryOf(reference)}`, async () => {
      await ops.pull(reference, ctx.signal);
      const image = await ops.image(reference);
      if (!image) throw new StepFailure(`${reference} is not present after the pull`);
      upToDate = image.Id === old.Image;
      return upToDate
        ? `pulled ${reference}: already the newest image (${short(image.Id)}), nothing to recreate`
        : `pulled ${reference}: image ${short(old.Image)} → ${short(image.Id)}`;
    });
  } catch (err) {
    throw new StepFailure(`update of ${unit.name} failed at pull: ${describeError(err)}; nothing was changed`);
  }
  if (upToDate) {
    for (const member of [unit.name, ...unit.dependants]) {
      for (const step of [...REPLACE_STEPS, 'cleanup'])
        ctx.step(member, step).skip('skipped: the container already runs the newest image');
    }
    return;
  }

  await recreateUnit(ctx, run, unit, old, { label: 'update', replaced });
}

/**
 * The unit's container (and its namespace dependants) replaced by new ones with the old settings:
 * rename (+ stop) → create → start → health each, then cleanup; a failure after a rename rolls the
 * unit back and throws a StepFailure naming the step.
 */
export async function recreateUnit(
  ctx: JobContext,
  run: RecreateRun,
  unit: PlannedUnit,
  old: Docker.ContainerInspectInfo,
  options: RecreateOptions,
): Promise<void> {
  const { ops } = run;
  const { label } = options;
  const replaced = options.replaced ?? new Map<string, string>();
  const done: Replacement[] = [];
  // the container being replaced: failures outside a step (an inspect) happen before its rename
  let member = unit.name;
  try {
    await replace(ctx, run, unit.name, old, done, replaced, options.configure);
    for (const dependant of unit.dependants) {
      member = dependant;
      const dependantOld = await ops.inspect(dependant);
      if (!dependantOld) {
        for (const step of [...REPLACE_STEPS, 'cleanup'])
          ctx.step(dependant, step).skip(`skipped: ${dependant} no longer exists`);
        continue;
      }
      await replace(ctx, run, dependant, dependantOld, done, replaced);
    }
  } catch (err) {
    const failure = err instanceof ReplaceFailure ? err : new ReplaceFailure(member, 'rename', err);
    const rolledBack = await rollback(ctx, run, unit.name, done);
    const where = failure.service !== unit.name ? ` of ${failure.service}` : '';
    throw new StepFailure(
      `${label} of ${unit.name} failed at ${failure.step}${where}: ${describeError(failure.cause)}; ${rolledBack}`,
    );
  }
  for (const r of done) replaced.set(r.oldId, r.newId!);

  // the unit is healthy: the old containers go (a failure here leaves the new ones running)
  for (const r of done) {
    try {
      await asStep(ctx.step(r.name, 'cleanup'), `removing the old container ${r.oldName}`, async () => {
        await ops.remove(r.oldId);
        return `removed the old container ${r.oldName} (${short(r.oldId)})`;
      });
    } catch (err) {
      throw new StepFailure(
        `${label} of ${unit.name} failed at cleanup of ${r.name}: ${describeError(err)}; the new container runs, remove ${r.oldName} by hand`,
      );
    }
  }
}

/** A failure inside `replace`, naming the step and container. */
class ReplaceFailure extends Error {
  constructor(
    readonly service: string,
    readonly step: string,
    override readonly cause: unknown,
  ) {
    super(describeError(cause));
  }
}

/** rename (+ stop) → create → start → health for one container. */
async function replace(
  ctx: JobContext,
  run: RecreateRun,
  name: string,
  old: Docker.ContainerInspectInfo,
  done: Replacement[],
  replaced: Map<string, string>,
  configure?: ConfigureCreate,
): Promise<void> {
  const { ops } = run;
  const guard = (step: string) => {
    if (ctx.signal.aborted)
      throw new ReplaceFailure(name, step, new StepFailure(`interrupted: ${describeError(ctx.signal.reason)}`));
  };
  const stepOf = async (step: string, begin: string, work: () => Promise<string>) => {
    guard(step);
    try {
      await asStep(ctx.step(name, step), begin, work);
    } catch (err) {
      throw new ReplaceFailure(name, step, err);
    }
  };
  const oldImage = await ops.image(old.Image);
  const oldName = `${name}-old-${Math.floor(run.now().getTime() / 1000)}`;
  const entry: Replacement = { name, oldId: old.Id, oldName, wasRunning: old.State.Running, newId: null };

  await stepOf('rename', `renaming ${name} to ${oldName}`, async () => {
    await ops.rename(old.Id, oldName);
    done.push(entry);
    if (!entry.wasRunning) return `renamed to ${oldName} (it was not running)`;
    await ops.stop(old.Id);
    return `renamed to ${oldName} and stopped`;
  });
  // a namespace owner replaced earlier: point at its new container
  const target = networkTargetOf(old.HostConfig.NetworkMode);
  const followed = target && replaced.has(target) ? `container:${replaced.get(target)}` : undefined;
  const ownerNow = target ? done.find((r) => r.oldId === target)?.newId : null;
  const networkMode = ownerNow ? `container:${ownerNow}` : followed;
  await stepOf('create', `creating ${name} from ${old.Config.Image}`, async () => {
    const request = recreateRequest(old, oldImage?.Config ?? null, name, networkMode);
    const note = configure?.(request.create, old) ?? null;
    entry.newId = await ops.create(request);
    return `created ${short(entry.newId)} from ${old.Config.Image} with the old container's settings${note ? `; ${note}` : ''}`;
  });
  await stepOf('start', `starting ${name}`, async () => {
    await ops.start(entry.newId!);
    return `started ${short(entry.newId!)}`;
  });
  let health: StepHandle | null = null;
  await stepOf('health', 'checking health', async () => {
    health = ctx.step(name, 'health');
    return ops.waitHealthy(entry.newId!, {
      timeoutMs: run.healthTimeoutS * 1000,
      stableMs: run.stableMs,
      signal: ctx.signal,
      say: (m) => health?.say(m),
    });
  });
}

/** Removes the new containers, renames the old ones back and starts those that ran; answers a summary. */
async function rollback(ctx: JobContext, run: RecreateRun, service: string, done: Replacement[]): Promise<string> {
  if (done.length === 0) return 'nothing had been changed';
  const { ops } = run;
  const step = ctx.addStep(service, 'rollback');
  step.begin(`rolling back ${done.map((r) => r.name).join(', ')}`);
  try {
    for (const r of [...done].reverse()) {
      if (r.newId) await ops.remove(r.newId);
      await ops.rename(r.oldId, r.name);
    }
    // namespace owners first, then the containers that join them
    for (const r of done) if (r.wasRunning) await ops.start(r.oldId);
    const summary = `rolled back: ${done.map((r) => `${r.name} is its old container ${short(r.oldId)} again${r.wasRunning ? ', running' : ' (stopped, as before)'}`).join(', ')}`;
    step.ok(summary);
    return summary;
  } catch (err) {
    const message = `rollback failed: ${describeError(err)}; check ${done.map((r) => `${r.name} (old container ${r.oldName})`).join(', ')} by hand`;
    step.fail(message);
    ctx.log.error({ err, service }, 'update rollback failed');
    return message;
  }
}
