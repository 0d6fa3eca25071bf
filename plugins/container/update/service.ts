/**
 * Container update jobs (API.md §4.11): checks the request, starts one detached job at a time on
 * the job runner and holds its containers, so start/stop/restart of them answers 409 `busy`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../../core/errors/app-error.ts';
import type { JobContext, JobRunner, JobSpec } from '../../jobs/index.ts';
import type { JobView } from '../../jobs/schemas.ts';
import type { StackMembership } from '../stack.ts';
import type { DockerClient } from '../docker-client.ts';
import { UpdateDocker } from './docker-ops.ts';
import { matchService, planUpdate, plannedSteps, type PlannedUnit, type ServiceMatch } from './plan.ts';
import { runUpdate } from './run.ts';

export const UPDATE_JOB_KIND = 'container_update';

export interface UpdateRequest {
  services: string[];
  backup?: boolean;
  health_timeout_s?: number;
}

export interface UpdateServiceOptions {
  docker: DockerClient;
  stack: StackMembership;
  jobs: JobRunner;
  /** Takes a `pre-update` backup, answers its id. */
  takeBackup: (note: string) => Promise<string>;
  stopTimeoutS: number;
  /** `containers.update_stable_s`: without a healthcheck, healthy = running this long. */
  stableS: number;
  now: () => Date;
  log: FastifyBaseLogger;
}

const busy = (message: string) => new AppError(409, 'busy', message);

export class UpdateService {
  private readonly ops: UpdateDocker;
  /** Container name → the update job that holds it. */
  private readonly held = new Map<string, string>();
  /** Kinds of the jobs that recreate stack containers: one of them runs at a time. */
  private readonly kinds = new Set<string>([UPDATE_JOB_KIND]);

  constructor(private readonly options: UpdateServiceOptions) {
    this.ops = new UpdateDocker(options.docker, options.stopTimeoutS);
  }

  /** The Docker operations, for other stack jobs (stack-jobs.ts). */
  get docker(): UpdateDocker {
    return this.ops;
  }

  /** The job holding a container, or null. */
  holderOf(name: string): string | null {
    return this.held.get(name) ?? null;
  }

  /** 409 `busy` when an update job holds the container (start/stop/restart must wait). */
  assertFree(name: string): void {
    const job = this.holderOf(name);
    if (job)
      throw busy(
        `container ${name} is being updated by job ${job}; try again when it has finished (GET /api/jobs/${job})`,
      );
  }

  /**
   * 409 `busy` while a job that recreates stack containers (an update, or another group's stack job
   * such as the static group's apply) is queued or running: one at a time.
   */
  assertNoStackJob(): void {
    const running = this.options.jobs
      .list()
      .find((j) => this.kinds.has(j.kind) && (j.status === 'queued' || j.status === 'running'));
    if (!running) return;
    const what = running.kind === UPDATE_JOB_KIND ? 'update' : running.kind;
    throw busy(
      `${what} job ${running.id} is running; one container update or apply job runs at a time, try again when it has finished (GET /api/jobs/${running.id})`,
    );
  }

  /** The units of `services` (stack containers with their namespace dependants); 422 for bad names. */
  async plan(services: string[]): Promise<PlannedUnit[]> {
    return planUpdate(await this.ops.listAll(), this.options.stack, services);
  }

  /** The stack container of each compose service (by name, else by compose service label), one Docker list. */
  async matchServices(services: string[]): Promise<Map<string, ServiceMatch>> {
    const summaries = await this.ops.listAll();
    return new Map(services.map((service) => [service, matchService(summaries, this.options.stack, service)]));
  }

  /**
   * Starts a job that holds `members` (start/stop/restart of them → 409 `busy`) until it ends;
   * 409 `busy` while another stack job runs. The kind joins the one-at-a-time rule.
   */
  startHeld(spec: JobSpec, members: string[], work: (ctx: JobContext) => Promise<void>): JobView {
    this.kinds.add(spec.kind);
    this.assertNoStackJob();
    let release = () => {};
    const job = this.options.jobs.start({ ...spec, exclusive: true }, async (ctx) => {
      try {
        await work(ctx);
      } finally {
        release();
      }
    });
    // held from now on: the job's work starts on the next turn of the event loop
    for (const member of members) this.held.set(member, job.id);
    release = () => {
      for (const member of members) if (this.held.get(member) === job.id) this.held.delete(member);
    };
    return job;
  }

  /** Validates against Docker, then starts the job; the answer is the queued job (202). */
  async start(request: UpdateRequest): Promise<JobView> {
    this.assertNoStackJob();
    const units = await this.plan(request.services);
    const params = {
      services: units.map((u) => u.name),
      backup: request.backup ?? false,
      health_timeout_s: request.health_timeout_s ?? 120,
    };
    const members = units.flatMap((u) => [u.name, ...u.dependants]);
    const job = this.startHeld(
      { kind: UPDATE_JOB_KIND, params, steps: plannedSteps(units, params.backup) },
      members,
      async (ctx) => {
        ctx.log.info(
          { services: params.services, dependants: members.filter((m) => !params.services.includes(m)) },
          'container update started',
        );
        await runUpdate(ctx, {
          units,
          backup: params.backup,
          healthTimeoutS: params.health_timeout_s,
          ops: this.ops,
          takeBackup: this.options.takeBackup,
          stableMs: this.options.stableS * 1000,
          now: this.options.now,
        });
      },
    );
    return job;
  }
}
