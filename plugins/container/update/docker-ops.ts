/**
 * The Docker operations of an update job (API.md §4.11): pull, rename, stop, create, start, health
 * wait and remove, each bounded by a deadline, with failures turned into sentences for the job.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { AppError } from '../../../core/errors/app-error.ts';
import { DOCKER_CALL_TIMEOUT_MS, dockerMessage, isDockerHttpError, type DockerClient } from '../docker-client.ts';
import { hasHealthcheck, type RecreateRequest } from './create-options.ts';

/** A pull may download hundreds of MB; it is bounded, but generously. */
const PULL_TIMEOUT_MS = 30 * 60_000;
const HEALTH_POLL_MS = 250;

/** A failed step, with the sentence the job shows. */
export class StepFailure extends Error {}

/** The registry a reference is pulled from (`traefik` → docker.io, `127.0.0.1:5000/x` → 127.0.0.1:5000). */
export function registryOf(reference: string): string {
  const first = reference.split('/')[0];
  const isHost = reference.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return isHost ? first : 'docker.io';
}

/** A Docker failure as a sentence (without dockerode's "(HTTP code N)" prefix). */
export function describeError(err: unknown): string {
  // streamed answers carry no JSON body: dockerode's text is "<reason> - <Docker's message>"
  if (isDockerHttpError(err))
    return dockerMessage(err).replace(/^(server error|not found|unauthorized|forbidden|conflict) - /, '');
  if (err instanceof AppError || err instanceof Error) return err.message;
  return String(err);
}

interface PullEvent {
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
}

export interface HealthWait {
  /** Wait for `healthy` (image healthcheck) rather than `running` for `stableMs`. */
  timeoutMs: number;
  stableMs: number;
  signal: AbortSignal;
  /** Progress sentences while waiting. */
  say: (message: string) => void;
}

export class UpdateDocker {
  constructor(
    private readonly docker: DockerClient,
    private readonly stopTimeoutS: number,
  ) {}

  private get engine(): Docker {
    return this.docker.engine;
  }

  /** Inspect by id or name; null when there is no such container. */
  async inspect(idOrName: string): Promise<Docker.ContainerInspectInfo | null> {
    try {
      return await this.docker.call(`inspect ${idOrName}`, (abortSignal) =>
        this.engine.getContainer(idOrName).inspect({ abortSignal }),
      );
    } catch (err) {
      if (isDockerHttpError(err) && err.statusCode === 404) return null;
      throw err;
    }
  }

  async image(reference: string): Promise<Docker.ImageInspectInfo | null> {
    try {
      return await this.docker.call(`inspect image ${reference}`, () => this.engine.getImage(reference).inspect());
    } catch (err) {
      if (isDockerHttpError(err) && err.statusCode === 404) return null;
      throw err;
    }
  }

  async listAll(): Promise<Docker.ContainerInfo[]> {
    return this.docker.call('list containers', (abortSignal) => this.engine.listContainers({ all: true, abortSignal }));
  }

  /** Pulls the same reference again; registry failures name the registry. */
  async pull(reference: string, signal: AbortSignal): Promise<void> {
    const registry = registryOf(reference);
    let events: PullEvent[];
    try {
      events = await this.docker.call(
        `pull ${reference}`,
        async (deadline) => {
          const abortSignal = AbortSignal.any([deadline, signal]);
          const stream = await this.engine.pull(reference, { abortSignal });
          return new Promise<PullEvent[]>((resolve, reject) => {
            abortSignal.addEventListener('abort', () => (stream as unknown as { destroy(): void }).destroy?.(), {
              once: true,
            });
            this.engine.modem.followProgress(stream, (err: Error | null, output: PullEvent[]) =>
              err ? reject(err) : resolve(output),
            );
          });
        },
        PULL_TIMEOUT_MS,
        true,
      );
    } catch (err) {
      if (signal.aborted) throw new StepFailure(`pull of ${reference} interrupted: ${describeError(signal.reason)}`);
      if (isDockerHttpError(err))
        throw new StepFailure(
          `registry ${registry} could not be reached or refused the pull of ${reference}: ${describeError(err)}`,
        );
      throw err;
    }
    const failed = events.find((e) => e.error || e.errorDetail?.message);
    if (failed)
      throw new StepFailure(
        `registry ${registry} failed the pull of ${reference}: ${failed.errorDetail?.message ?? failed.error}`,
      );
  }

  async rename(id: string, name: string): Promise<void> {
    await this.docker.call(`rename ${id} to ${name}`, (abortSignal) =>
      this.engine.getContainer(id).rename({ name, abortSignal }),
    );
  }

  /** Stops a running container (`containers.stop_timeout_s`, then Docker kills). */
  async stop(id: string): Promise<void> {
    try {
      await this.docker.call(
        `stop ${id}`,
        (abortSignal) => this.engine.getContainer(id).stop({ t: this.stopTimeoutS, abortSignal }),
        this.stopTimeoutS * 1000 + DOCKER_CALL_TIMEOUT_MS,
      );
    } catch (err) {
      if (!(isDockerHttpError(err) && err.statusCode === 304)) throw err;
    }
  }

  /** Creates the container and connects its further networks; answers its id. */
  async create(request: RecreateRequest): Promise<string> {
    const container = await this.docker.call(`create ${request.create.name}`, (abortSignal) =>
      this.engine.createContainer({ ...request.create, abortSignal }),
    );
    for (const { network, endpoint } of request.connect) {
      await this.docker.call(`connect ${request.create.name} to ${network}`, (abortSignal) =>
        this.engine
          .getNetwork(network)
          .connect({ Container: container.id, EndpointConfig: endpoint, abortSignal } as Docker.NetworkConnectOptions),
      );
    }
    return container.id;
  }

  /** Restarts a container (stopped within `containers.stop_timeout_s`, then killed), as Docker's restart does. */
  async restart(id: string): Promise<void> {
    await this.docker.call(
      `restart ${id}`,
      (abortSignal) => this.engine.getContainer(id).restart({ t: this.stopTimeoutS, abortSignal }),
      this.stopTimeoutS * 1000 + DOCKER_CALL_TIMEOUT_MS,
    );
  }

  async start(id: string): Promise<void> {
    try {
      await this.docker.call(`start ${id}`, (abortSignal) => this.engine.getContainer(id).start({ abortSignal }));
    } catch (err) {
      if (!(isDockerHttpError(err) && err.statusCode === 304)) throw err;
    }
  }

  /** Force-removes a container (and its anonymous volumes stay: they may hold data). */
  async remove(id: string): Promise<void> {
    try {
      await this.docker.call(
        `remove ${id}`,
        (abortSignal) => this.engine.getContainer(id).remove({ force: true, abortSignal }),
        this.stopTimeoutS * 1000 + DOCKER_CALL_TIMEOUT_MS,
      );
    } catch (err) {
      if (!(isDockerHttpError(err) && err.statusCode === 404)) throw err;
    }
  }

  /**
   * Healthy = `healthy` when the container has a healthcheck, else running without a restart for
   * `stableMs`; fails on `unhealthy`, exit, restart or timeout. Answers what it saw.
   */
  async waitHealthy(id: string, wait: HealthWait): Promise<string> {
    const started = Date.now();
    const first = await this.inspect(id);
    if (!first) throw new StepFailure('the new container disappeared');
    const withHealthcheck = hasHealthcheck(first.Config as { Healthcheck?: { Test?: string[] } });
    // running for stableMs must be possible inside the timeout
    const timeoutMs = withHealthcheck ? wait.timeoutMs : Math.max(wait.timeoutMs, wait.stableMs + 5000);
    wait.say(
      withHealthcheck
        ? 'waiting for the healthcheck to report healthy'
        : `waiting until it has run for ${wait.stableMs / 1000} s`,
    );
    for (;;) {
      if (wait.signal.aborted) throw new StepFailure(`health wait interrupted: ${describeError(wait.signal.reason)}`);
      const now = await this.inspect(id);
      if (!now) throw new StepFailure('the new container disappeared');
      const { State } = now;
      const elapsed = Date.now() - started;
      if (
        !State.Running ||
        State.Restarting ||
        now.RestartCount !== first.RestartCount ||
        State.StartedAt !== first.State.StartedAt
      ) {
        throw new StepFailure(
          `the new container stopped (state ${State.Status}, exit code ${State.ExitCode}${State.Error ? `, ${State.Error}` : ''})`,
        );
      }
      if (withHealthcheck) {
        const health = State.Health?.Status;
        if (health === 'healthy') return `healthy after ${(elapsed / 1000).toFixed(1)} s`;
        if (health === 'unhealthy') {
          const last = State.Health?.Log?.at(-1);
          throw new StepFailure(
            `the healthcheck reports unhealthy${last ? ` (exit code ${last.ExitCode}${last.Output.trim() ? `: ${last.Output.trim().slice(0, 200)}` : ''})` : ''}`,
          );
        }
      } else if (elapsed >= wait.stableMs) {
        return `running for ${(elapsed / 1000).toFixed(1)} s (the image has no healthcheck)`;
      }
      if (elapsed > timeoutMs) {
        throw new StepFailure(
          withHealthcheck
            ? `not healthy within ${timeoutMs / 1000} s (health: ${State.Health?.Status ?? 'unknown'})`
            : `not running for ${wait.stableMs / 1000} s within ${timeoutMs / 1000} s`,
        );
      }
      await sleep(HEALTH_POLL_MS, undefined, { signal: wait.signal }).catch(() => undefined);
    }
  }
}
