/**
 * The Docker Engine client of the Containers group: built once from `app.config.docker`, every call
 * bounded by a deadline so a hung or absent daemon turns into a quick 502 instead of a stuck request.
 */
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type Docker from 'dockerode';
import type { AppConfig } from '../../core/config/schema.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { containerErrors } from './errors.ts';

/** Reads and pings; stop and restart get `stop_timeout_s` on top of this. */
export const DOCKER_CALL_TIMEOUT_MS = 10_000;

/** A Docker answer with an HTTP status (dockerode sets `statusCode` and the engine's JSON message). */
export interface DockerHttpError extends Error {
  statusCode: number;
  json?: { message?: string } | null;
}

export const isDockerHttpError = (err: unknown): err is DockerHttpError =>
  err instanceof Error && typeof (err as { statusCode?: unknown }).statusCode === 'number';

/** The engine's own message of an HTTP error, without dockerode's "(HTTP code N)" prefix. */
export function dockerMessage(err: DockerHttpError): string {
  const message = err.json?.message ?? err.message;
  return String(message)
    .replace(/^\(HTTP code \d+\)\s*/, '')
    .trim();
}

/** Where the engine listens, as the user wrote it (`docker.host` wins over `docker.socket`). */
export function dockerEndpoint(config: AppConfig['docker']): string {
  return config.host || `unix://${config.socket}`;
}

/** Dockerode options for `docker.host` (unix://, tcp://, http://, https://) or the socket path. */
export function dockerOptions(config: AppConfig['docker']): Docker.DockerOptions {
  if (!config.host) return { socketPath: config.socket };
  const url = new URL(config.host);
  if (url.protocol === 'unix:') return { socketPath: url.pathname };
  if (url.protocol === 'tcp:' || url.protocol === 'http:' || url.protocol === 'https:') {
    const protocol = url.protocol === 'https:' ? 'https' : 'http';
    return { host: url.hostname, port: Number(url.port) || (protocol === 'https' ? 2376 : 2375), protocol };
  }
  throw new Error(`docker.host must start with unix://, tcp://, http:// or https://, got ${config.host}`);
}

/**
 * Whether Docker counts as configured for the health check: a host is set, or the socket file
 * exists. A missing socket means the deployment did not mount one (API.md §4.1 `skipped`).
 */
export async function dockerConfigured(config: AppConfig['docker']): Promise<boolean> {
  if (config.host) return true;
  try {
    await stat(config.socket);
    return true;
  } catch {
    return false;
  }
}

/**
 * dockerode is loaded on the first Docker call, not at startup: with docker-modem, ssh2 and gRPC it
 * is about a tenth of a second of every start (issue 11), and many deployments use Docker rarely.
 * It is CommonJS, so a synchronous require keeps `engine` a plain property for the callers.
 */
const loadDockerode = (): typeof Docker => createRequire(import.meta.url)('dockerode') as typeof Docker;

/** Runs one Docker call with a deadline; transport failures become 502 naming Docker and its address. */
export class DockerClient {
  #engine: Docker | null = null;
  private readonly closing = new AbortController();

  constructor(
    private readonly endpoint: string,
    private readonly options: Docker.DockerOptions,
  ) {}

  get engine(): Docker {
    if (!this.#engine) {
      const DockerClass = loadDockerode();
      this.#engine = new DockerClass(this.options);
    }
    return this.#engine;
  }

  /**
   * `work` gets an AbortSignal (for the dockerode calls that accept one); the deadline also applies
   * to calls that do not. HTTP answers (404, 409, …) are rethrown for the caller to map.
   */
  async call<T>(
    what: string,
    work: (signal: AbortSignal) => Promise<T>,
    timeoutMs = DOCKER_CALL_TIMEOUT_MS,
    keepHttpErrors = false,
  ): Promise<T> {
    const deadline = new AbortController();
    const signal = AbortSignal.any([deadline.signal, this.closing.signal]);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        deadline.abort();
        reject(containerErrors.dockerUnavailable(this.endpoint, `${what}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([work(signal), expired]);
    } catch (err) {
      if (isDockerHttpError(err)) {
        if (err.statusCode >= 500 && !keepHttpErrors)
          throw containerErrors.dockerUnavailable(
            this.endpoint,
            `${what}: Docker answered HTTP ${err.statusCode}: ${dockerMessage(err)}`,
          );
        throw err;
      }
      if (err instanceof AppError) throw err;
      throw containerErrors.dockerUnavailable(this.endpoint, `${what}: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** GET /_ping. */
  async ping(signal?: AbortSignal): Promise<void> {
    await this.call('ping', () => this.engine.ping(), signal ? 3000 : DOCKER_CALL_TIMEOUT_MS);
  }

  /**
   * GET /distribution/{name}/json: the registry's descriptor of a reference, without pulling. Docker
   * reports registry failures as HTTP errors, which are rethrown as they are (they are not Docker's).
   */
  distribution(reference: string): Promise<{ Descriptor?: { digest?: string } }> {
    return this.call(
      `registry lookup of ${reference}`,
      (abortSignal) =>
        new Promise((resolve, reject) => {
          this.engine.modem.dial(
            {
              path: `/distribution/${reference}/json`,
              method: 'GET',
              abortSignal,
              statusCodes: { 200: true, 401: 'unauthorized', 403: 'forbidden', 404: 'not found', 500: 'server error' },
            },
            (err: unknown, data: unknown) =>
              err ? reject(err) : resolve(data as { Descriptor?: { digest?: string } }),
          );
        }),
      DOCKER_CALL_TIMEOUT_MS,
      true,
    );
  }

  /** Ends calls still waiting (app shutdown). */
  close(): void {
    this.closing.abort();
  }
}
