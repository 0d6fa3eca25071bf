/**
 * The Containers group's public surface for other groups' jobs on stack containers (API.md §4.20
 * apply): the update machinery (rename, create, start, health wait, cleanup, rollback; restart plus
 * health wait) and the one-job-at-a-time rule shared with container updates (409 `busy`).
 */
import type Docker from 'dockerode';
import type { JobContext, JobView, PlannedStep } from '../jobs/index.ts';
import type { PlannedUnit, ServiceMatch } from './update/plan.ts';
import type { ConfigureCreate } from './update/run.ts';

export type { ConfigureCreate, PlannedUnit, ServiceMatch };

/** What a stack job's work gets besides its JobContext. */
export interface StackJobTools {
  readonly ctx: JobContext;
  /** A container by name, null when there is none. */
  inspect(name: string): Promise<Docker.ContainerInspectInfo | null>;
  /**
   * Replaces the unit's container and its dependants as an update does (steps of `recreateSteps`),
   * `configure` applied to the unit's own create request; a failure rolls the unit back and throws.
   */
  recreate(unit: PlannedUnit, configure: ConfigureCreate): Promise<void>;
  /** Restarts a container, then waits for it to be healthy (steps of `restartSteps`); throws on failure. */
  restart(name: string): Promise<void>;
}

export interface StackJobSpec {
  kind: string;
  params: Record<string, unknown>;
  steps: PlannedStep[];
  /** Containers the job holds: start/stop/restart of them answer 409 `busy` while it runs. */
  members: string[];
  /** health wait of recreated and restarted containers (as an update's `health_timeout_s`) */
  healthTimeoutS: number;
}

export interface StackJobs {
  /** Whether a Docker engine is configured (a host, or a socket file that exists). */
  configured(): Promise<boolean>;
  /** The units of the named stack containers; 422 naming each unknown or non-stack entry (as an update). */
  plan(services: string[]): Promise<PlannedUnit[]>;
  /**
   * The stack container of each compose service: the one named like it, else the only one labelled
   * `com.docker.compose.service=<service>`; otherwise why not (unknown, not in the stack, several).
   */
  matchServices(services: string[]): Promise<Map<string, ServiceMatch>>;
  /** The steps `recreate` reports for a unit, in order. */
  recreateSteps(unit: PlannedUnit): PlannedStep[];
  /** The steps `restart` reports for a container, in order. */
  restartSteps(name: string): PlannedStep[];
  /**
   * Starts a detached job; 409 `busy` while a container update or another stack job is queued or
   * running (one at a time: they recreate the same containers).
   */
  start(spec: StackJobSpec, work: (tools: StackJobTools) => Promise<void>): JobView;
}
