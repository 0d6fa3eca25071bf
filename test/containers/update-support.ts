/** Shared pieces of the update-job tests: the app, stack containers on registry images, job polling. */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type Docker from 'dockerode';
import type { FastifyInstance } from 'fastify';
import { build } from '../helpers/build.ts';
import { waitFor } from '../helpers/wait.ts';
import { dockerSkipReason, startEngine, type Engine } from './support.ts';
import { registrySkipReason, startRegistry, type Registry } from './registry.ts';

/**
 * The ava functions of a file whose tests need a private dockerd and a registry: one of each is
 * started before the file's tests and stopped after them; without root, docker.io or
 * docker-registry, `updateTest` skips with the reason (logged once, naming `what`).
 */
export function engineAndRegistryTests(what: string) {
  const test = anyTest as TestFn<{ engine?: Engine; registry?: Registry }>;
  const skip = dockerSkipReason() ?? registrySkipReason();
  if (skip) console.warn(`SKIP ${what}: ${skip}`);
  test.before(async (t) => {
    if (skip) return;
    t.context.engine = await startEngine();
    t.context.registry = await startRegistry();
  });
  test.after.always(async (t) => {
    await t.context.registry?.stop();
    await t.context.engine?.stop();
  });
  return { test, updateTest: skip ? test.serial.skip : test.serial };
}

export const STACK = ['svc-ok', 'svc-bad', 'svc-other', 'svc-down', 'svc-bk', 'svc-slow'];

export interface Job {
  id: string;
  kind: string;
  status: string;
  progress: number;
  params: Record<string, unknown>;
  steps: Array<{
    service: string | null;
    step: string;
    status: string;
    message: string;
    started_at: string | null;
    finished_at: string | null;
  }>;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** An app on the private engine; `stableS` = containers.update_stable_s (short, so tests are quick). */
export function updateApp(
  t: ExecutionContext,
  engine: Engine,
  stableS = 1,
  extra: Record<string, unknown> = {},
  logStream?: NodeJS.WritableStream,
): Promise<FastifyInstance> {
  return build(t, {
    logStream,
    config: {
      auth: { mode: 'off' },
      docker: { host: '', socket: engine.socket },
      stack: { containers: STACK, project: '' },
      containers: { stop_timeout_s: 5, updates_ttl_s: 600, update_stable_s: stableS },
      ...extra,
    },
  });
}

export interface ServiceSpec {
  name: string;
  image: string;
  labels?: Record<string, string>;
  networkMode?: string;
}

/** A running container of `image` with a restart policy and labels, as compose would make it. */
export async function createService(docker: Docker, spec: ServiceSpec): Promise<Docker.ContainerInspectInfo> {
  const container = await docker.createContainer({
    name: spec.name,
    Image: spec.image,
    Labels: spec.labels ?? {},
    Env: ['STACK_TEST=1'],
    HostConfig: {
      NetworkMode: spec.networkMode ?? 'none',
      Init: true,
      RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
    },
  });
  await container.start();
  return container.inspect();
}

/** Polls GET /api/jobs/:id until the job has finished. */
export async function finished(server: FastifyInstance, id: string, timeoutMs = 180_000): Promise<Job> {
  return waitFor(
    async () => {
      const job = (await server.inject({ method: 'GET', url: `/api/jobs/${id}` })).json() as Job;
      return job.status === 'succeeded' || job.status === 'failed' ? job : null;
    },
    timeoutMs,
    100,
  );
}

/** Names of all containers on the engine. */
export async function containerNames(docker: Docker): Promise<string[]> {
  return (await docker.listContainers({ all: true })).map((c) => c.Names[0].replace(/^\//, '')).sort();
}

export const stepOf = (job: Job, service: string | null, step: string) =>
  job.steps.find((s) => s.service === service && s.step === step);
