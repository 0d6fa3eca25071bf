/**
 * A real etcd cluster per test file (TESTING.md "etcd"): Debian's `etcd` 3.4 binary, N members on
 * 127.0.0.1 with free client and peer ports, each with its own data dir under one temp dir. Members
 * can be stopped (SIGTERM), killed (SIGKILL) and started again on the same ports and data dir, which
 * is how the cluster tests take a member or the whole cluster away and bring it back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePorts } from './ports.ts';
import { waitFor } from './wait.ts';

const onPath = (name: string): boolean =>
  (process.env.PATH ?? '').split(':').some((dir) => existsSync(path.join(dir, name)));

/** Why the etcd tests cannot run here, or null. */
export const etcdSkipReason = (): string | null =>
  onPath('etcd') ? null : 'etcd not installed (apt-get install etcd-server)';

/** A port taken between `freePorts` and etcd's bind (another test process): worth a fresh attempt. */
const portClash = (message: string): boolean => /address already in use|duplicate url/i.test(message);

export interface EtcdMember {
  readonly name: string;
  /** `http://127.0.0.1:<port>`: gRPC and the v3 JSON gateway share it. */
  readonly clientUrl: string;
  readonly running: boolean;
  /** Everything the process printed (for failure messages). */
  output(): string;
  start(): Promise<void>;
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export interface EtcdCluster {
  readonly members: EtcdMember[];
  /** Client URLs of every member, the `cluster.etcd_endpoints` setting. */
  readonly endpoints: string[];
  /** Stops every member and removes the data dirs. */
  destroy(): Promise<void>;
}

/** True once the member answers its health endpoint with a leader in the cluster. */
async function healthy(clientUrl: string): Promise<boolean> {
  const response = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
  if (!response?.ok) return false;
  const body = (await response.json().catch(() => null)) as { health?: string } | null;
  return body?.health === 'true';
}

/**
 * Starts an N-member cluster (a fresh one: `--initial-cluster-state new`) and waits until every
 * member is healthy. A port that another process took before etcd bound it gives a fresh attempt on
 * new ports (at most three).
 */
export async function startEtcdCluster(size = 3): Promise<EtcdCluster> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startEtcdClusterOnce(size);
    } catch (err) {
      if (attempt >= 3 || !portClash((err as Error).message)) throw err;
    }
  }
}

async function startEtcdClusterOnce(size: number): Promise<EtcdCluster> {
  const root = await mkdtemp(path.join(tmpdir(), 'etcd-'));
  const token = path.basename(root);
  const ports = await freePorts(size * 2);
  const specs = [];
  for (let i = 1; i <= size; i += 1) {
    specs.push({ name: `m${i}`, client: ports[2 * i - 2]!, peer: ports[2 * i - 1]! });
  }
  const initialCluster = specs.map((s) => `${s.name}=http://127.0.0.1:${s.peer}`).join(',');
  const members = specs.map((spec) => {
    let child: ChildProcess | null = null;
    let exited: Promise<void> = Promise.resolve();
    let output = '';
    const clientUrl = `http://127.0.0.1:${spec.client}`;
    const member: EtcdMember = {
      name: spec.name,
      clientUrl,
      get running() {
        return child !== null && child.exitCode === null && child.signalCode === null;
      },
      output: () => output,
      async start() {
        if (member.running) return;
        child = spawn(
          'etcd',
          [
            '--name',
            spec.name,
            '--data-dir',
            path.join(root, spec.name),
            '--listen-client-urls',
            clientUrl,
            '--advertise-client-urls',
            clientUrl,
            '--listen-peer-urls',
            `http://127.0.0.1:${spec.peer}`,
            '--initial-advertise-peer-urls',
            `http://127.0.0.1:${spec.peer}`,
            '--initial-cluster',
            initialCluster,
            '--initial-cluster-state',
            'new',
            '--initial-cluster-token',
            token,
            // a busy 2-core CI machine delays heartbeats: 250 ms / 2.5 s rather than etcd's 100 ms / 1 s.
            // Not more: etcd raises every lease TTL to at least 1.5 × the election timeout (3.75 s
            // here), and the tests use 5 s leases
            '--heartbeat-interval',
            '250',
            '--election-timeout',
            '2500',
            // no metrics listener of its own: the client port serves /metrics and /health
            '--log-level',
            process.env.ETCD_TEST_LOG ?? 'warn',
            '--logger',
            'zap',
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        const current = child;
        current.stdout?.on('data', (d: Buffer) => {
          output += d.toString();
        });
        current.stderr?.on('data', (d: Buffer) => {
          output += d.toString();
        });
        exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
      },
      async stop(signal = 'SIGTERM') {
        if (!member.running) return;
        child!.kill(signal);
        await exited;
      },
    };
    return member;
  });
  const destroy = async () => {
    await Promise.all(members.map((m) => m.stop('SIGKILL')));
    await rm(root, { recursive: true, force: true });
  };
  try {
    await Promise.all(members.map((m) => m.start()));
    await waitFor(
      async () => {
        for (const m of members) {
          if (!m.running) throw new Error(`etcd ${m.name} exited: ${m.output()}`);
        }
        return (await Promise.all(members.map((m) => healthy(m.clientUrl)))).every(Boolean);
      },
      30_000,
      100,
    );
  } catch (err) {
    await destroy();
    throw err;
  }
  return { members, endpoints: members.map((m) => m.clientUrl), destroy };
}

/** Waits until the given member answers healthy again (after `start()`). */
export async function waitHealthy(member: EtcdMember): Promise<void> {
  await waitFor(
    async () => {
      if (!member.running) throw new Error(`etcd ${member.name} exited: ${member.output()}`);
      return healthy(member.clientUrl);
    },
    30_000,
    100,
  );
}
