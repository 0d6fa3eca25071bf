/** Measuring helpers shared by the benchmark rows: wrk on core 1, CPU ticks and RSS from /proc, medians. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** USER_HZ: /proc/<pid>/stat counts CPU time in clock ticks (100 on every Linux we run on). */
const TICKS_PER_S = 100;
/** The granularity of cpuMicros(): /proc counts CPU time in clock ticks. */
export const CPU_TICK_MS = 1000 / TICKS_PER_S;
export const SERVER_CORE = '0';
export const LOAD_CORE = '1';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The pid and its descendants (nginx workers, tsx children). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(statFields(Number(entry))[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while we listed
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** Fields of /proc/<pid>/stat after the command name: [state, ppid, …]. */
function statFields(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** User and system CPU of a process tree, in µs. */
export function cpuSplit(pid: number): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const p of processTree(pid)) {
    try {
      const f = statFields(p);
      user += Number(f[11]);
      system += Number(f[12]);
    } catch {
      // gone
    }
  }
  return { user: (user * 1_000_000) / TICKS_PER_S, system: (system * 1_000_000) / TICKS_PER_S };
}

/** utime + stime of a process tree, in µs. */
export function cpuMicros(pid: number): number {
  const { user, system } = cpuSplit(pid);
  return user + system;
}

/** VmRSS of one process, MiB. */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Peak RSS of a pid while `work` runs (sampled every 20 ms). */
export async function peakRss<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ value: T; baseMiB: number; peakMiB: number }> {
  const baseMiB = rssMiB(pid);
  let peakMiB = baseMiB;
  const timer = setInterval(() => {
    peakMiB = Math.max(peakMiB, rssMiB(pid));
  }, 20);
  try {
    const value = await work();
    peakMiB = Math.max(peakMiB, rssMiB(pid));
    return { value, baseMiB, peakMiB };
  } finally {
    clearInterval(timer);
  }
}

export interface WrkResult {
  rps: number;
  p99Ms: number;
  requests: number;
  errors: number;
  cpuUsPerReq: number;
  /** the user-mode part of cpuUsPerReq (JavaScript, V8, Node) */
  userUsPerReq: number;
  /** the kernel part (the loopback TCP path: writev, softirq delivery to the client, ACKs) */
  sysUsPerReq: number;
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
}

/**
 * Stock wrk writes its request headers in the order of a Lua table walk, which LuaJIT's seeded string
 * hashing changes from one wrk process to the next (`Host, Accept-Encoding` in one run,
 * `Accept-Encoding, Host` in the next): every run handed the server `req.headers` objects of a new
 * shape, and V8 deoptimised the code that reads them (Node's `parserOnIncoming`, our fast route;
 * the "wrong map" deopts session 9 traced). This script writes Host first and the others sorted by
 * name, as Go's net/http (Traefik) does, in every run (session 10).
 */
const FIXED_ORDER = path.join(import.meta.dirname, 'wrk-fixed-order.lua');

/** wrk -t1 -c10 pinned to the load core against `url`; the server's CPU µs per request from `serverPid`. */
export async function wrk(
  url: string,
  serverPid: number,
  options: { duration: number; headers?: string[] },
): Promise<WrkResult> {
  const headers = (options.headers ?? []).flatMap((h) => ['-H', h]);
  const cpu0 = cpuSplit(serverPid);
  const { stdout } = await run(
    'taskset',
    ['-c', LOAD_CORE, 'wrk', '-t1', '-c10', `-d${options.duration}s`, '--latency', '-s', FIXED_ORDER, ...headers, url],
    { maxBuffer: 1 << 20 },
  );
  const cpu1 = cpuSplit(serverPid);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0);
  const p99 = /99%\s+(\S+)/.exec(stdout)?.[1] ?? '';
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  const user = requests ? (cpu1.user - cpu0.user) / requests : NaN;
  const sys = requests ? (cpu1.system - cpu0.system) / requests : NaN;
  return { rps, p99Ms: ms(p99), requests, errors, cpuUsPerReq: user + sys, userUsPerReq: user, sysUsPerReq: sys };
}

/** Every server and tool the bench started that is still running: stopped if the bench is interrupted. */
const children = new Set<ChildProcess>();
let stopOnExit = false;

function track(child: ChildProcess): ChildProcess {
  if (!stopOnExit) {
    stopOnExit = true;
    // Ctrl-C (or a kill) of the bench would otherwise leave pinned servers, nginx and wrk running
    const stopAll = () => children.forEach((c) => c.kill('SIGKILL'));
    process.once('exit', stopAll);
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
      ['SIGHUP', 129],
    ] as const)
      process.once(signal, () => {
        process.stderr.write(`bench: ${signal}, stopping ${children.size} processes\n`);
        process.exit(code);
      });
  }
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Spawns `command` pinned to the server core. */
export function spawnPinned(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; quiet?: boolean; logFile?: string } = {},
): ChildProcess {
  const log = options.logFile ? openSync(options.logFile, 'a') : null;
  return track(
    spawn('taskset', ['-c', SERVER_CORE, command, ...args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', log ?? (options.quiet ? 'ignore' : 'pipe'), log ?? (options.quiet ? 'ignore' : 'inherit')],
    }),
  );
}

/** Time and peak RSS of a command pinned to the server core (GNU time is not needed: we sample /proc). */
export async function timedCommand(
  command: string,
  args: string[],
  cwd?: string,
  okCodes: number[] = [0],
): Promise<{ seconds: number; peakMiB: number }> {
  const t0 = performance.now();
  const child = spawnPinned(command, args, { cwd, quiet: true });
  let peakMiB = 0;
  const timer = setInterval(() => {
    for (const p of processTree(child.pid!)) peakMiB = Math.max(peakMiB, rssMiB(p));
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(timer);
  if (code === null || !okCodes.includes(code)) throw new Error(`${command} exited with ${code}`);
  return { seconds: (performance.now() - t0) / 1000, peakMiB };
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function hasCommand(name: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${name}`]).then(
    () => true,
    () => false,
  );
}
