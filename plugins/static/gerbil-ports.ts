/**
 * Gerbil's published ports as Docker wants them (API.md §4.20 apply): the compose file's
 * `services.gerbil.ports` (short syntax `[ip:][host:]container[/protocol]` with ranges, or long
 * syntax `{target, published, host_ip, protocol}`) turned into `HostConfig.PortBindings` and
 * `ExposedPorts`, as `docker compose up` would create them.
 */
import type Docker from 'dockerode';
import { DOT_ENV, interpolateValue, NO_VARIABLES, type ComposeVariables } from './compose-env.ts';

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

/** A `ports:` item publishesPort could not read, with why (PortItemError's message) and whether it uses variables. */
export interface UnreadableItem {
  index: number;
  item: unknown;
  message: string;
  usesVariables: boolean;
}

/** The names of the variables a compose value uses (`$$` is a literal `$`). */
function variableNames(value: unknown): string[] {
  const text = JSON.stringify(value ?? null).replaceAll('$$', '');
  return [...new Set([...text.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1]))];
}

/**
 * Whether an item could publish `port`/`protocol` once its variables have values: read with every
 * variable 1, then 2; the same container ports both times are the item's, ports that change with the
 * values could be any (of the protocols read); an item not read either way could be anything.
 */
function couldPublish(item: unknown, port: number, protocol: string): boolean {
  const names = variableNames(item);
  const keysWith = (dummy: string) => {
    const values = new Map(names.map((name) => [name, dummy]));
    return Object.keys(portBindings([item], { file: DOT_ENV, values, unresolved: new Map() }));
  };
  let one: string[];
  let two: string[];
  try {
    [one, two] = [keysWith('1'), keysWith('2')];
  } catch {
    return true;
  }
  const key = `${port}/${protocol}`;
  if (one.join() === two.join()) return one.includes(key);
  return [...one, ...two].some((bound) => bound.endsWith(`/${protocol}`));
}

/**
 * The items that publishesPort could not read and that could publish `port`/`protocol` (an item whose
 * variables decide its container port could be any): why the entry point list says "not published"
 * while such an item may say otherwise once its variable has a value (or the `.env` can be used).
 */
export function unreadableItemsFor(
  items: unknown[],
  variables: ComposeVariables,
  port: number,
  protocol: string,
): UnreadableItem[] {
  const found: UnreadableItem[] = [];
  items.forEach((item, index) => {
    try {
      portBindings([item], variables);
    } catch (err) {
      if (!couldPublish(item, port, protocol)) return;
      found.push({ index, item, message: (err as Error).message, usesVariables: variableNames(item).length > 0 });
    }
  });
  return found;
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
