/**
 * Free TCP ports for a child process (Traefik, etcd, a registry, the compiled server) that binds
 * them a moment after the test picked them.
 *
 * `listen(0)` hands out a port of the kernel's ephemeral range — the range every outgoing
 * connection of every test process takes its local port from. Released, such a port can be taken
 * by one of those connections before the child binds it: Traefik then exits with "bind: address
 * already in use" (a clean-clone CI run, e2e › targets). These ports are picked outside
 * `net.ipv4.ip_local_port_range`, where no connection is ever given a port, and each is bound once
 * to check it is free; all are held until every one is found, so one call never returns a port twice.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Lowest port handed out: below it are well-known services of the machine. */
const FLOOR = 10_000;

/** The ports outside the ephemeral range, as [from, to] spans; none when the range cannot be read. */
function spans(): Array<[number, number]> {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (!Number.isInteger(low) || !Number.isInteger(high)) return [];
    const out: Array<[number, number]> = [];
    if (low - 1 >= FLOOR + 1000) out.push([FLOOR, low - 1]);
    if (high + 1 <= 65_535 - 1000) out.push([high + 1, 65_535]);
    return out;
  } catch {
    return [];
  }
}

const SPANS = spans();

const listen = (server: net.Server, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(true));
  });

const close = (server: net.Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

/** A random port of the spans outside the ephemeral range; null on a machine without such spans. */
function candidate(): number | null {
  if (SPANS.length === 0) return null;
  const size = SPANS.reduce((sum, [from, to]) => sum + to - from + 1, 0);
  let pick = Math.floor(Math.random() * size);
  for (const [from, to] of SPANS) {
    if (pick <= to - from) return from + pick;
    pick -= to - from + 1;
  }
  return null;
}

/** `count` distinct TCP ports on 127.0.0.1, free when returned (released for the caller's child to bind). */
export async function freePorts(count: number): Promise<number[]> {
  const held: net.Server[] = [];
  try {
    for (let tries = 0; held.length < count; tries++) {
      const server = net.createServer();
      const port = tries < 200 ? candidate() : null; // 200 misses: fall back to the kernel's choice
      if (await listen(server, port ?? 0)) held.push(server);
    }
    return held.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(held.map(close));
  }
}

/** One free TCP port on 127.0.0.1 (see freePorts). */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}
