/**
 * A resource in its three shapes: the file (`ResourceFileData`), the discovered part Stack Manager
 * keeps in memory, and the full `ResourceRecord` (discovered fields + overrides) that the API and
 * the config generator read. Pure conversions, no I/O.
 */
import { stringifyCanonical } from '../../model/lossless-json.ts';
import { hostsOf, type Priority, type ResourceRecord } from '../../model/upstream-routers.ts';
import { defaultResourceConfig, type ResourceConfig, type ResourceTls } from '../../model/types.ts';
import type { ConfigFileData } from '../../model/resource-config.ts';
import type { ResourceFileData } from './schemas.ts';
import { localFromFile, localToFile } from './local.ts';

/** Fields refreshed by every sync; hand edits of these are ignored (API.md §3.3). */
export const DISCOVERED_KEYS = [
  'name',
  'router',
  'source',
  'status',
  'missing_since',
  'rule',
  'host',
  'hosts',
  'entrypoints',
  'tls',
  'priority',
  'upstream_service',
  'upstream_middlewares',
  'path_prefix',
] as const;
export type DiscoveredPart = Pick<ResourceRecord, (typeof DISCOVERED_KEYS)[number]>;
export type Overrides = Pick<ResourceRecord, 'middlewares' | 'external_middlewares' | 'service_id' | 'config'>;

/** Priority of an assignment when none (or 0) is given (API.md §4.4). */
export const DEFAULT_ASSIGNMENT_PRIORITY = 100;
const INTEGER = /^-?[0-9]+$/;

/** An assignment priority as stored: 0, null or absent become the default. */
export const assignmentPriority = (value: number | null | undefined): number =>
  value ? value : DEFAULT_ASSIGNMENT_PRIORITY;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Our middlewares by priority descending, then id (the order of the Resource object). */
export const sortAssigned = (list: ResourceRecord['middlewares']): ResourceRecord['middlewares'] =>
  [...list].sort((a, b) => b.priority - a.priority || compare(a.id, b.id));

/** External references by priority descending, then name. */
export const sortExternal = (list: ResourceRecord['external_middlewares']): ResourceRecord['external_middlewares'] =>
  [...list].sort((a, b) => b.priority - a.priority || compare(a.name, b.name));

function priorityFromFile(value: number | string | null | undefined): Priority {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && INTEGER.test(value))
    return Number.isSafeInteger(Number(value)) ? Number(value) : BigInt(value);
  return null;
}

/** Integers YAML cannot hold exactly are written as digit strings (read back by priorityFromFile). */
function priorityToFile(value: Priority): number | string | null {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  return value;
}

function tlsFromFile(tls: ResourceFileData['tls']): ResourceTls | null {
  if (!tls) return null;
  return {
    cert_resolver: tls.cert_resolver ?? null,
    domains: tls.domains ? tls.domains.map((d) => ({ main: d.main, sans: d.sans ?? [] })) : null,
    options: tls.options ?? null,
  };
}

/**
 * The discovered part of a file. Used when Stack Manager has no better knowledge: at startup and
 * for files added by hand; a file with overrides only is a disabled resource without a router yet.
 */
export function discoveredFromFile(id: string, data: ResourceFileData): DiscoveredPart {
  // an own resource: the file is its definition (API.md §4.24)
  if (data.source === 'local')
    return {
      ...localFromFile(id, data),
      name: data.name ?? id,
      source: 'local',
      tls: tlsFromFile(data.tls),
      priority: priorityFromFile(data.priority),
    };
  const rule = data.rule ?? '';
  const hosts = data.hosts ?? hostsOf(rule);
  return {
    name: data.name ?? id,
    router: data.router ?? '',
    source: data.source ?? 'pangolin',
    status: data.router ? (data.status ?? 'active') : 'disabled',
    missing_since: data.missing_since ?? null,
    rule,
    host: data.host !== undefined ? data.host : (hosts[0] ?? null),
    hosts,
    entrypoints: data.entrypoints ?? [],
    tls: tlsFromFile(data.tls),
    priority: priorityFromFile(data.priority),
    upstream_service: data.upstream_service ?? '',
    upstream_middlewares: data.upstream_middlewares ?? [],
  };
}

/** The complete `config` object: missing sub-objects and fields (and nulls meaning "inherit") take their defaults. */
export function fullConfig(partial: ConfigFileData | undefined): ResourceConfig {
  const c = partial ?? {};
  const d = defaultResourceConfig();
  const tcpEntrypoints = c.tcp?.entrypoints;
  return {
    http: { entrypoints: c.http?.entrypoints ?? d.http.entrypoints },
    tls: {
      cert_resolver: c.tls?.cert_resolver ?? null,
      domains: c.tls?.domains ? c.tls.domains.map((x) => ({ main: x.main, sans: x.sans ?? [] })) : null,
      options: c.tls?.options ?? null,
    },
    tcp: {
      enabled: c.tcp?.enabled ?? false,
      entrypoints: tcpEntrypoints ?? d.tcp.entrypoints,
      sni_rule: c.tcp?.sni_rule ?? null,
      service_id: c.tcp?.service_id ?? null,
    },
    headers: { request: c.headers?.request ?? {}, response: c.headers?.response ?? {} },
    priority: { priority: c.priority?.priority ?? null },
    mtls: { enabled: c.mtls?.enabled ?? false },
    mtlswhitelist: { ...d.mtlswhitelist, ...stripUndefined(c.mtlswhitelist ?? {}) },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Override fields of a file with their defaults, assignments sorted. */
export function overridesFromFile(data: ResourceFileData): Overrides {
  return {
    middlewares: sortAssigned(
      (data.middlewares ?? []).map((m) => ({ id: m.id, priority: assignmentPriority(m.priority) })),
    ),
    external_middlewares: sortExternal(
      (data.external_middlewares ?? []).map((e) => ({
        name: e.name,
        priority: assignmentPriority(e.priority),
        provider: e.provider ?? null,
      })),
    ),
    service_id: data.service_id ?? null,
    config: fullConfig(data.config),
  };
}

/** Discovered part and overrides as one record. */
export function compose(id: string, discovered: DiscoveredPart, overrides: Overrides): ResourceRecord {
  return { id, ...discovered, ...overrides };
}

/** The discovered part of a record (a fresh object). */
export function discoveredOf(record: ResourceRecord): DiscoveredPart {
  return Object.fromEntries(DISCOVERED_KEYS.map((key) => [key, record[key]])) as DiscoveredPart;
}

/** What a record's file holds: every field, unsafe priorities as digit strings. */
export function toFile(record: ResourceRecord): ResourceFileData {
  if (record.source === 'local') return localToFile(record, priorityToFile(record.priority));
  const { id: _id, priority, path_prefix: _prefix, ...rest } = record;
  return { ...rest, priority: priorityToFile(priority) } as ResourceFileData;
}

/** Whether two discovered parts are equal (canonical JSON: BigInt exact, key order ignored). */
export function sameDiscovered(a: DiscoveredPart, b: DiscoveredPart): boolean {
  return (
    stringifyCanonical(DISCOVERED_KEYS.map((k) => a[k] ?? null)) ===
    stringifyCanonical(DISCOVERED_KEYS.map((k) => b[k] ?? null))
  );
}
