/**
 * Own resources (`source: local`, API.md §4.24): routers Stack Manager defines itself. Pure
 * conversions between the API body, the stored file and the record, plus the checks the body
 * schema cannot make (hosts xor rule, service_id xor servers, rule syntax, server URLs). No I/O.
 */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import { hostsOf, type ResourceRecord } from '../../model/upstream-routers.ts';
import type { ResourceTls } from '../../model/types.ts';
import type { ResourceFileData } from './schemas.ts';

/** The writable fields of POST/PUT /api/resources (schemas.ts LocalResourceBody). */
export interface LocalBody {
  id?: string;
  name: string;
  hosts?: string[];
  rule?: string;
  path_prefix?: string | null;
  entrypoints?: string[];
  service_id?: string;
  servers?: string[];
  tls?: { cert_resolver?: string | null; domains?: Array<{ main: string; sans?: string[] }> | null } | null;
  priority?: number | null;
  middlewares?: Array<{ middleware_id: string; priority?: number | null }>;
}

export const DEFAULT_LOCAL_ENTRYPOINTS = ['websecure'];
/** Id of the service `servers` creates for resource `id`. */
export const createdServiceId = (id: string): string => `${id}-service`;
/** The description that marks a service as made by `servers` (only such a service is replaced or removed). */
export const createdServiceDescription = (id: string): string => `servers of local resource ${id} (created by it)`;

/** ``Host(`a`) || Host(`b`)``, then `&& PathPrefix(`/p`)` (parenthesised when there are several hosts). */
export function buildRule(hosts: string[], pathPrefix: string | null | undefined): string {
  const hostPart = hosts.map((host) => `Host(\`${host}\`)`).join(' || ');
  if (!pathPrefix) return hostPart;
  return `${hosts.length > 1 ? `(${hostPart})` : hostPart} && PathPrefix(\`${pathPrefix}\`)`;
}

/** Problems of a rule Traefik would refuse outright: unbalanced quotes or parentheses, no matcher call. */
export function ruleProblems(rule: string, pointer = '/rule'): ErrorDetail[] {
  let depth = 0;
  let quote: string | null = null;
  for (const char of rule) {
    if (quote) {
      if (char === quote) quote = null;
      continue;
    }
    if (char === '`' || char === '"') quote = char;
    else if (char === '(') depth += 1;
    else if (char === ')' && --depth < 0) break;
  }
  if (quote) return [{ path: pointer, message: `has an unterminated ${quote} quote` }];
  if (depth !== 0) return [{ path: pointer, message: 'has unbalanced parentheses' }];
  if (!/[A-Za-z]+\s*\(/.test(rule)) return [{ path: pointer, message: 'has no matcher such as Host(`example.com`)' }];
  return [];
}

/** A server URL Traefik's loadBalancer takes: absolute http, https or h2c, a host, no credentials, query or fragment. */
function serverProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (!['http:', 'https:', 'h2c:'].includes(url.protocol)) return 'must use http, https or h2c';
  if (!url.hostname) return 'has no host';
  if (url.username || url.password) return 'must not hold credentials';
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) return 'must not have a query or fragment';
  return null;
}

/** Every problem of a body beyond its schema, as 422 details (empty: valid). */
export function localBodyProblems(body: LocalBody): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const hasHosts = body.hosts !== undefined;
  const hasRule = body.rule !== undefined;
  if (hasHosts === hasRule)
    problems.push({ path: hasHosts ? '/rule' : '/hosts', message: 'give either hosts or rule, not both or neither' });
  if (hasRule) problems.push(...ruleProblems(body.rule!));
  if (hasRule && body.path_prefix)
    problems.push({ path: '/path_prefix', message: 'goes with hosts; write PathPrefix into the rule instead' });
  if (hasHosts && new Set(body.hosts!.map((h) => h.toLowerCase())).size !== body.hosts!.length)
    problems.push({ path: '/hosts', message: 'lists a host twice' });
  if ((body.service_id !== undefined) === (body.servers !== undefined))
    problems.push({ path: '/service_id', message: 'give either service_id or servers, not both or neither' });
  body.servers?.forEach((server, index) => {
    const problem = serverProblem(server);
    if (problem) problems.push({ path: `/servers/${index}`, message: problem });
  });
  const ids = (body.middlewares ?? []).map((m) => m.middleware_id);
  if (new Set(ids).size !== ids.length) problems.push({ path: '/middlewares', message: 'lists a middleware twice' });
  return problems;
}

/** TLS as stored: absent → on (default certificate) for `websecure`, off otherwise; null → off. */
function tlsOf(body: LocalBody, entrypoints: string[]): ResourceTls | null {
  if (body.tls === null) return null;
  if (body.tls === undefined)
    return entrypoints.includes('websecure') ? { cert_resolver: null, domains: null, options: null } : null;
  return {
    cert_resolver: body.tls.cert_resolver ?? null,
    domains: body.tls.domains ? body.tls.domains.map((d) => ({ main: d.main, sans: d.sans ?? [] })) : null,
    options: null,
  };
}

/** The definition part of a local record from a checked body (`serviceId`: the one to reference). */
export function localDefinition(
  id: string,
  body: LocalBody,
  name: string,
  serviceId: string,
): Pick<
  ResourceRecord,
  | 'name'
  | 'router'
  | 'source'
  | 'status'
  | 'missing_since'
  | 'rule'
  | 'host'
  | 'hosts'
  | 'entrypoints'
  | 'tls'
  | 'priority'
  | 'upstream_service'
  | 'upstream_middlewares'
  | 'path_prefix'
  | 'service_id'
> {
  const pathPrefix = body.hosts ? (body.path_prefix ?? null) : null;
  const rule = body.hosts ? buildRule(body.hosts, pathPrefix) : body.rule!;
  const hosts = hostsOf(rule);
  const entrypoints = body.entrypoints ?? DEFAULT_LOCAL_ENTRYPOINTS;
  return {
    name,
    router: `${id}@http`,
    source: 'local',
    status: 'active',
    missing_since: null,
    rule,
    host: hosts[0] ?? null,
    hosts,
    entrypoints: [...entrypoints],
    tls: tlsOf(body, entrypoints),
    priority: body.priority ?? null,
    upstream_service: '',
    upstream_middlewares: [],
    path_prefix: pathPrefix,
    service_id: serviceId,
  };
}

/**
 * The discovered-part fields of a local file: its own definition. A file may give `hosts` (and
 * `path_prefix`) instead of `rule`, as the API does; `router` is always `<id>@http`.
 */
export function localFromFile(id: string, data: ResourceFileData) {
  const pathPrefix = data.rule === undefined && data.hosts ? (data.path_prefix ?? null) : null;
  const rule = data.rule ?? (data.hosts && data.hosts.length > 0 ? buildRule(data.hosts, pathPrefix) : '');
  const hosts = hostsOf(rule);
  return {
    router: `${id}@http`,
    status: data.status ?? ('active' as const),
    missing_since: null,
    rule,
    host: hosts[0] ?? null,
    hosts,
    entrypoints: data.entrypoints ?? [...DEFAULT_LOCAL_ENTRYPOINTS],
    upstream_service: '',
    upstream_middlewares: [],
    path_prefix: pathPrefix,
  };
}

/**
 * What a local record's file holds: the fields one writes by hand (hosts + path_prefix when the rule
 * is built from them, else rule), no router or upstream fields, status only when disabled.
 */
export function localToFile(record: ResourceRecord, priority: number | string | null): ResourceFileData {
  const fromHosts = record.hosts.length > 0 && record.rule === buildRule(record.hosts, record.path_prefix);
  const file: ResourceFileData = { name: record.name, source: 'local' };
  if (record.status !== 'active') file.status = record.status;
  if (fromHosts) {
    file.hosts = [...record.hosts];
    if (record.path_prefix) file.path_prefix = record.path_prefix;
  } else file.rule = record.rule;
  file.entrypoints = [...record.entrypoints];
  file.tls = record.tls;
  file.priority = priority;
  file.service_id = record.service_id;
  file.middlewares = record.middlewares.map((m) => ({ ...m }));
  file.external_middlewares = record.external_middlewares.map((e) => ({ ...e }));
  file.config = record.config as ResourceFileData['config'];
  return file;
}

/** Hand-edit check of a local file (API.md §3.3): a rule (or hosts) that Traefik can take. */
export function localFileProblems(data: ResourceFileData): ErrorDetail[] {
  if (data.source !== 'local') return [];
  if (data.rule === undefined && (!data.hosts || data.hosts.length === 0))
    return [{ path: '/rule', message: 'a local resource needs rule or hosts' }];
  if (data.rule !== undefined && data.hosts !== undefined)
    return [{ path: '/hosts', message: 'give either hosts or rule, not both' }];
  return data.rule !== undefined ? ruleProblems(data.rule) : [];
}

/** Router priority as Traefik orders it: the set one, else the rule's length (Traefik's default). */
export function effectivePriority(record: ResourceRecord): number | bigint {
  const set = record.config.priority.priority ?? record.priority;
  return set === null || set === 0 ? record.rule.length : set;
}

/**
 * Warnings of a local resource whose hosts overlap an active discovered router's at equal
 * priority: Traefik then picks between them by its own tie rules, not by ours (API.md §4.24).
 */
export function overlapWarnings(local: ResourceRecord, all: readonly ResourceRecord[]): string[] {
  if (local.source !== 'local' || local.hosts.length === 0) return [];
  const mine = new Set(local.hosts.map((h) => h.toLowerCase()));
  const priority = effectivePriority(local);
  const warnings: string[] = [];
  for (const other of all) {
    if (other.source === 'local' || other.status !== 'active') continue;
    const shared = other.hosts.filter((h) => mine.has(h.toLowerCase()));
    // == on purpose: a BigInt priority equals the same number
    if (shared.length === 0 || effectivePriority(other) != priority) continue;
    warnings.push(
      `hosts ${shared.join(', ')} overlap discovered router ${other.router} (resource ${other.id}) at the same priority ${priority}: set a priority to choose which one Traefik takes`,
    );
  }
  return warnings;
}
