/**
 * Shared pieces of the apply tests (API.md §4.20): a private dockerd (test/containers/support.ts),
 * a Traefik static config and a compose file in a temp dir, a fake Traefik API as the `traefik`
 * data source, and `gerbil`/`traefik` busybox containers made as compose makes Pangolin's.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import type { FastifyInstance } from 'fastify';
import { build, tempDir } from '../helpers/build.ts';
import { startFakeTraefikApi, type FakeTraefikApi } from '../helpers/fake-traefik-api.ts';
import { dockerSkipReason, startEngine, TEST_IMAGE, type Engine } from '../containers/support.ts';

export const STATIC = `# Traefik static configuration
entryPoints:
  web:
    address: ":80"
  websecure:
    address: ":443"
  tcp-2222:
    address: ":2222" # added by sync
api:
  insecure: true
`;

export const composeWith = (ports: string[]) => `# the Pangolin stack
services:
  gerbil:
    image: fosrl/gerbil:1.0.0
    ports:
${ports.map((p) => `      - "${p}"`).join('\n')}
  traefik:
    image: traefik:v3.5
    network_mode: service:gerbil
`;

/** What compose published before sync added tcp-2222. */
export const OLD_PORTS = ['51820:51820/udp', '443:443', '80:80'];

/** The ava functions of a file whose tests need a private dockerd (skipped with the reason otherwise); `Extra`: more context. */
export function engineTests<Extra extends object = object>(what: string) {
  const test = anyTest as TestFn<{ engine?: Engine } & Extra>;
  const skip = dockerSkipReason();
  if (skip) console.warn(`SKIP ${what}: ${skip}`);
  test.before(async (t) => {
    if (!skip) t.context.engine = await startEngine();
  });
  test.after.always(async (t) => {
    await t.context.engine?.stop();
  });
  return { test, engineTest: skip ? test.serial.skip : test.serial };
}

export interface ApplyHarness {
  app: FastifyInstance;
  traefik: FakeTraefikApi;
  dir: string;
  staticFile: string;
  composeFile: string;
  /** bind-mounted into gerbil at /flag: gerbil's healthcheck passes while `ok` exists there */
  flagDir: string;
}

/** Files, the fake Traefik API (listing only web and websecure) and the app on the private engine. */
export async function applyHarness(
  t: ExecutionContext,
  engine: Engine,
  ports: string[],
  extra: Record<string, unknown> = {},
): Promise<ApplyHarness> {
  const dir = await tempDir(t, 'sm-apply-');
  const staticFile = path.join(dir, 'traefik_config.yml');
  const composeFile = path.join(dir, 'docker-compose.yml');
  const flagDir = path.join(dir, 'flag');
  await mkdir(flagDir);
  await writeFile(path.join(flagDir, 'ok'), '');
  await writeFile(staticFile, STATIC);
  await writeFile(composeFile, composeWith(ports));
  const traefik = await startFakeTraefikApi();
  t.teardown(() => traefik.close());
  const app = await build(t, {
    config: {
      auth: { mode: 'off' },
      docker: { host: '', socket: engine.socket },
      stack: { containers: ['traefik', 'gerbil', 'crowdsec'], project: '', compose_file: composeFile },
      containers: { stop_timeout_s: 5, updates_ttl_s: 600, update_stable_s: 1 },
      proxy: { static_config_path: staticFile },
      datasources: { traefik_url: traefik.url },
      ...extra,
    },
  });
  return { app, traefik, dir, staticFile, composeFile, flagDir };
}

/** Docker's PortBindings for "host:container[/udp]" items (what compose creates). */
export function bindingsOf(ports: string[]): Record<string, Array<{ HostIp: string; HostPort: string }>> {
  return Object.fromEntries(
    ports.map((p) => {
      const [host, rest] = p.split(':');
      const [container, protocol = 'tcp'] = rest.split('/');
      return [`${container}/${protocol}`, [{ HostIp: '', HostPort: host }]];
    }),
  );
}

/** Container names and extra labels of the pair (compose's `<project>-<service>-1` with its labels). */
export interface PairNames {
  gerbil: string;
  traefik: string;
  labels?: { gerbil?: Record<string, string>; traefik?: Record<string, string> };
}

/**
 * Pangolin's pair: `gerbil` publishing `ports` (network none: the private dockerd has no bridge,
 * and Docker keeps PortBindings of a `none` container without opening anything), with a
 * healthcheck on the bind-mounted flag file; `traefik` in gerbil's network namespace unless
 * `traefikAlone`. `names`: other container names and labels than `gerbil`/`traefik`.
 */
export async function createPair(
  docker: Docker,
  harness: Pick<ApplyHarness, 'flagDir'>,
  ports: string[],
  traefikAlone = false,
  names: PairNames = { gerbil: 'gerbil', traefik: 'traefik' },
): Promise<{ gerbil: Docker.ContainerInspectInfo; traefik: Docker.ContainerInspectInfo }> {
  for (const c of await docker.listContainers({ all: true })) await docker.getContainer(c.Id).remove({ force: true });
  const bindings = bindingsOf(ports);
  const gerbil = await docker.createContainer({
    name: names.gerbil,
    Image: TEST_IMAGE,
    Cmd: ['sh', '-c', 'while true; do sleep 1; done'],
    Labels: { 'com.example.role': 'gateway', ...names.labels?.gerbil },
    ExposedPorts: Object.fromEntries(Object.keys(bindings).map((k) => [k, {}])),
    Healthcheck: {
      Test: ['CMD', 'test', '-e', '/flag/ok'],
      Interval: 200_000_000,
      Timeout: 1_000_000_000,
      Retries: 1,
    },
    HostConfig: {
      NetworkMode: 'none',
      Init: true,
      PortBindings: bindings,
      Binds: [`${harness.flagDir}:/flag:ro`],
      RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
    },
  });
  await gerbil.start();
  const traefik = await docker.createContainer({
    name: names.traefik,
    Image: TEST_IMAGE,
    Cmd: ['sh', '-c', 'while true; do sleep 1; done'],
    ...(names.labels?.traefik ? { Labels: names.labels.traefik } : {}),
    HostConfig: { NetworkMode: traefikAlone ? 'none' : `container:${names.gerbil}`, Init: true },
  });
  await traefik.start();
  return { gerbil: await gerbil.inspect(), traefik: await traefik.inspect() };
}
