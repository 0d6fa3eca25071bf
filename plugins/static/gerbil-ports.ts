/**
 * Gerbil's published ports as Docker wants them (API.md §4.20 apply): the compose file's
 * `services.gerbil.ports` (short syntax `[ip:][host:]container[/protocol]` with ranges, or long
 * syntax `{target, published, host_ip, protocol}`) turned into `HostConfig.PortBindings` and
 * `ExposedPorts`, as `docker compose up` would create them.
 */
import type Docker from 'dockerode';
import { interpolateValue, NO_VARIABLES, type ComposeVariables } from './compose-env.ts';

export type PortBindings = Record<string, Array<{ HostIp: string; HostPort: string }>>;

/** A port item the apply job cannot use, with why; the route answers 409 naming the file. */
export class PortItemError extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

/** More ports than this in one range is a typo, not a Gerbil setup. */
const MAX_RANGE = 1000;
const PROTOCOLS = new Set(['tcp', 'udp', 'sctp']);

interface Range {
  from: number;
  to: number;
}

function range(text: string, what: string): Range {
  const match = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(text);
  if (!match) throw new Error(`${what} "${text}" is not a port or a port range`);
  const from = Number(match[1]);
  const to = Number(match[2] ?? match[1]);
  if (from < 1 || to > 65535 || to < from) throw new Error(`${what} "${text}" is outside 1-65535`);
  if (to - from >= MAX_RANGE) throw new Error(`${what} "${text}" spans more than ${MAX_RANGE} ports`);
  return { from, to };
}

/** Adds the bindings of container ports `container` to host ports `host` (null: Docker picks). */
function bind(out: PortBindings, hostIp: string, host: Range | null, container: Range, protocol: string): void {
  const count = container.to - container.from + 1;
  if (host && host.to - host.from + 1 !== count && count !== 1)
    throw new Error(
      `host ports ${host.from}-${host.to} and container ports ${container.from}-${container.to} differ in length`,
    );
  for (let i = 0; i < count; i++) {
    let hostPort = '';
    if (host) hostPort = count === 1 && host.to !== host.from ? `${host.from}-${host.to}` : String(host.from + i);
    const key = `${container.from + i}/${protocol}`;
    (out[key] ??= []).push({ HostIp: hostIp, HostPort: hostPort });
  }
}

/** `[ip:][host:]container[/protocol]`; IPv6 addresses in brackets. */
function shortSyntax(out: PortBindings, text: string): void {
  const slash = text.lastIndexOf('/');
  const protocol = slash >= 0 ? text.slice(slash + 1).toLowerCase() : 'tcp';
  let spec = slash >= 0 ? text.slice(0, slash) : text;
  if (!PROTOCOLS.has(protocol)) throw new Error(`protocol "${protocol}" is not tcp, udp or sctp`);
  let hostIp = '';
  if (spec.startsWith('[')) {
    const end = spec.indexOf(']:');
    if (end < 0) throw new Error(`"${text}" has an unterminated [IPv6] address`);
    hostIp = spec.slice(1, end);
    spec = spec.slice(end + 2);
  }
  const parts = spec.split(':');
  if (parts.length > 2) {
    hostIp = parts.slice(0, -2).join(':');
    parts.splice(0, parts.length - 2);
  }
  const container = range(parts.at(-1)!, 'container port');
  const host = parts.length === 2 && parts[0] !== '' ? range(parts[0], 'host port') : null;
  bind(out, hostIp, host, container, protocol);
}

/** `{target, published?, host_ip?, protocol?}`. */
function longSyntax(out: PortBindings, item: Record<string, unknown>): void {
  const target = item.target;
  if (typeof target !== 'number' && typeof target !== 'string') throw new Error('target is missing');
  const protocol = String(item.protocol ?? 'tcp').toLowerCase();
  if (!PROTOCOLS.has(protocol)) throw new Error(`protocol "${protocol}" is not tcp, udp or sctp`);
  const published = item.published;
  const host =
    published === undefined || published === null || published === '' ? null : range(String(published), 'published');
  bind(out, String(item.host_ip ?? ''), host, range(String(target), 'target'), protocol);
}

/**
 * The PortBindings of Gerbil's `ports:` items (JS values), their `${VAR}`s taken from `variables`
 * (the compose file's `.env`, compose-env.ts); throws PortItemError naming the item.
 */
export function portBindings(items: unknown[], variables: ComposeVariables = NO_VARIABLES): PortBindings {
  const out: PortBindings = {};
  items.forEach((raw, index) => {
    try {
      const item = interpolateValue(raw, variables);
      if (typeof item === 'number') shortSyntax(out, String(item));
      else if (typeof item === 'string') shortSyntax(out, item.trim());
      else if (item && typeof item === 'object' && !Array.isArray(item))
        longSyntax(out, item as Record<string, unknown>);
      else throw new Error('it is neither a "host:container" string nor a {target, published} mapping');
    } catch (err) {
      throw new PortItemError(index, (err as Error).message);
    }
  });
  return out;
}

/**
 * Whether one of Gerbil's `ports:` items publishes container port `port`/`protocol` (the entry point
 * list's `published`, and what sync adds). An item the apply job could not use publishes nothing:
 * the one reading of the compose file for both.
 */
export function publishesPort(items: unknown[], variables: ComposeVariables, port: number, protocol: string): boolean {
  const key = `${port}/${protocol}`;
  return items.some((item) => {
    try {
      return key in portBindings([item], variables);
    } catch {
      return false;
    }
  });
}

/** `0.0.0.0` and an empty HostIp both mean every address. */
const normal = (bindings: PortBindings | null | undefined): string[] =>
  Object.entries(bindings ?? {})
    .flatMap(([key, list]) =>
      (list ?? []).map((b) => `${key} ${b.HostIp === '0.0.0.0' ? '' : (b.HostIp ?? '')}:${b.HostPort ?? ''}`),
    )
    .sort();

/** Whether a container already publishes exactly these bindings. */
export function sameBindings(current: PortBindings | null | undefined, wanted: PortBindings): boolean {
  const a = normal(current);
  const b = normal(wanted);
  return a.length === b.length && a.every((entry, i) => entry === b[i]);
}

/** "80/tcp → 80, 51820/udp → 51820": the bindings for a job message. */
export function describeBindings(bindings: PortBindings): string {
  const entries = Object.entries(bindings).flatMap(([key, list]) =>
    list.map((b) => `${b.HostIp ? `${b.HostIp}:` : ''}${b.HostPort || '(any)'} → ${key}`),
  );
  return entries.length > 0 ? entries.join(', ') : 'none';
}

/**
 * Sets the new bindings on a replacement's create request; the old container's exposed ports that
 * were only there for its old bindings go, the new ones are exposed (as compose does).
 */
export function withBindings(
  create: Docker.ContainerCreateOptions,
  old: Docker.ContainerInspectInfo,
  bindings: PortBindings,
): string {
  const exposed: Record<string, object> = { ...(create.ExposedPorts ?? {}) };
  for (const key of Object.keys(old.HostConfig.PortBindings ?? {})) if (!(key in bindings)) delete exposed[key];
  for (const key of Object.keys(bindings)) exposed[key] = {};
  create.ExposedPorts = exposed;
  create.HostConfig = { ...create.HostConfig, PortBindings: structuredClone(bindings) };
  return `published ports ${describeBindings(bindings)} (from the compose file)`;
}
