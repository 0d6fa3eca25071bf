/**
 * A private Docker engine per test file (TESTING.md "Real Docker engine"): started from the shared
 * fixture scripts in a short temp dir, with the busybox test image imported; never the system socket.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { fixture } from '../helpers/shared.ts';

const run = promisify(execFile);
const FIXTURES = fixture('docker');
export const TEST_IMAGE = 'stack-test/busybox:1';

const onPath = (name: string): boolean =>
  (process.env.PATH ?? '').split(':').some((dir) => existsSync(path.join(dir, name)));

/** Why the Docker tests cannot run here, or null when they can. */
export function dockerSkipReason(): string | null {
  if (process.getuid?.() !== 0) return 'not root (the private dockerd needs root)';
  if (!['dockerd', 'containerd', 'runc', 'docker'].every(onPath))
    return 'docker.io not installed (apt-get install docker.io)';
  if (!existsSync('/bin/busybox')) return 'busybox-static not installed (apt-get install busybox-static)';
  return null;
}

export interface Engine {
  dir: string;
  socket: string;
  docker: Docker;
  stop(): Promise<void>;
}

/** Starts dockerd in /tmp/dk-XXXXXX and imports the busybox image. */
export async function startEngine(): Promise<Engine> {
  const dir = await mkdtemp('/tmp/dk-');
  const stop = async () => {
    await run(path.join(FIXTURES, 'stop-dockerd.sh'), [dir]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await run(path.join(FIXTURES, 'start-dockerd.sh'), [dir]);
    const socket = path.join(dir, 'docker.sock');
    await run(path.join(FIXTURES, 'make-busybox-image.sh'), [], {
      env: { ...process.env, DOCKER_HOST: `unix://${socket}` },
    });
    return { dir, socket, docker: new Docker({ socketPath: socket }), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface ContainerSpec {
  name: string;
  labels?: Record<string, string>;
  /** running (default), exited (started then stopped) or created (never started). */
  state?: 'running' | 'exited' | 'created';
  healthcheck?: boolean;
}

/** A busybox sleep loop without network; Init makes stop take milliseconds instead of the timeout. */
export async function createContainer(docker: Docker, spec: ContainerSpec): Promise<Docker.Container> {
  const container = await docker.createContainer({
    name: spec.name,
    Image: TEST_IMAGE,
    Cmd: ['sh', '-c', 'while true; do sleep 1; done'],
    Labels: spec.labels ?? {},
    HostConfig: { NetworkMode: 'none', Init: true },
    ...(spec.healthcheck
      ? { Healthcheck: { Test: ['CMD', 'true'], Interval: 200_000_000, Timeout: 1_000_000_000, Retries: 3 } }
      : {}),
  });
  const state = spec.state ?? 'running';
  if (state !== 'created') await container.start();
  if (state === 'exited') await container.stop({ t: 5 });
  return container;
}

/** The Docker state of a container by name. */
export async function stateOf(docker: Docker, name: string): Promise<string> {
  return (await docker.getContainer(name).inspect()).State.Status;
}
