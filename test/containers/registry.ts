/**
 * A real image registry per test file (TESTING.md "Image registry"): Debian's `docker-registry`
 * (CNCF distribution 2.8) on 127.0.0.1:<free port> with its own config and storage in a temp dir,
 * plus helpers that build test images from the busybox image and push them to it with the docker
 * CLI of the private dockerd. dockerd treats 127.0.0.0/8 registries as insecure: plain HTTP works.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/wait.ts';
import { TEST_IMAGE, type Engine } from './support.ts';

const run = promisify(execFile);

const onPath = (name: string): boolean =>
  (process.env.PATH ?? '').split(':').some((dir) => existsSync(path.join(dir, name)));

/** Why the registry tests cannot run here, or null. */
export const registrySkipReason = (): string | null =>
  onPath('docker-registry') ? null : 'docker-registry not installed (apt-get install docker-registry)';

export interface Registry {
  /** `127.0.0.1:<port>`, the registry part of image references. */
  host: string;
  stop(): Promise<void>;
}

/** Starts a registry and waits until GET /v2/ answers 200. */
export async function startRegistry(): Promise<Registry> {
  const dir = await mkdtemp(path.join(tmpdir(), 'registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const config = path.join(dir, 'config.yml');
  await writeFile(
    config,
    [
      'version: 0.1',
      'log: { level: error, accesslog: { disabled: true } }',
      `storage: { filesystem: { rootdirectory: ${JSON.stringify(path.join(dir, 'storage'))} }, delete: { enabled: true } }`,
      `http: { addr: "${host}" }`,
      '',
    ].join('\n'),
  );
  let output = '';
  const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`docker-registry exited (${child.exitCode}): ${output}`);
        return (await fetch(`http://${host}/v2/`).catch(() => null))?.status === 200;
      },
      30_000,
      50,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { host, stop };
}

export interface ImageSpec {
  /** Written to /version.txt: makes each build a different image. */
  content: string;
  /** A Docker HEALTHCHECK command (`true`, `false`); none when absent. */
  healthcheck?: string;
  labels?: Record<string, string>;
}

/** The docker CLI against the private engine. */
export function dockerCli(engine: Engine, args: string[]): Promise<{ stdout: string }> {
  return run('docker', args, {
    env: { ...process.env, DOCKER_HOST: `unix://${engine.socket}`, DOCKER_BUILDKIT: '0' },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Builds an image from the busybox test image (classic builder, no RUN: no network needed), tags
 * it `reference` and pushes it; answers the image id and the registry digest of the push.
 */
export async function buildAndPush(
  engine: Engine,
  reference: string,
  spec: ImageSpec,
): Promise<{ id: string; digest: string }> {
  const context = await mkdtemp(path.join(tmpdir(), 'image-'));
  try {
    await mkdir(context, { recursive: true });
    await writeFile(path.join(context, 'version.txt'), `${spec.content}\n`);
    await writeFile(
      path.join(context, 'Dockerfile'),
      [
        `FROM ${TEST_IMAGE}`,
        'COPY version.txt /version.txt',
        ...Object.entries(spec.labels ?? {}).map(([k, v]) => `LABEL ${k}=${JSON.stringify(v)}`),
        ...(spec.healthcheck ? [`HEALTHCHECK --interval=1s --timeout=2s --retries=1 CMD ${spec.healthcheck}`] : []),
        'CMD ["sh", "-c", "while true; do sleep 1; done"]',
        '',
      ].join('\n'),
    );
    await dockerCli(engine, ['build', '-q', '-t', reference, context]);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
  const { stdout } = await dockerCli(engine, ['push', reference]);
  const digest = /digest: (sha256:[0-9a-f]{64})/.exec(stdout)?.[1];
  if (!digest) throw new Error(`docker push ${reference} printed no digest: ${stdout}`);
  const id = (await engine.docker.getImage(reference).inspect()).Id;
  return { id, digest };
}

/**
 * Publishes a newer image under `reference` without this engine having it: build + push v2, then
 * point the local tag back at `previousId` and drop v2 locally, so the update job really pulls.
 */
export async function publishNewer(
  engine: Engine,
  reference: string,
  previousId: string,
  spec: ImageSpec,
): Promise<{ id: string; digest: string }> {
  const pushed = await buildAndPush(engine, reference, spec);
  await dockerCli(engine, ['tag', previousId, reference]);
  await dockerCli(engine, ['rmi', pushed.id]).catch(() => undefined);
  return pushed;
}
