/**
 * Upstream routers (API.md §4.4) as both data sources report them, normalised, and the stored
 * resource record they become. Pure functions, no I/O; the reconciliation that turns routers into
 * records lives with its poller (plugins/resources/discovery.ts).
 */
import { isObject } from '../core/ids.ts';
import type { JsonObject, ResourceConfig, ResourceTls } from './types.ts';
import { slugify } from './ids.ts';

/** Kind of the data source that discovered a resource. */
export type SourceKind = 'pangolin' | 'traefik';

/**
 * Router priority. Safe integers are numbers; integers above 2^53−1 (Traefik uses up to MaxInt64)
 * stay BigInt, as parseLossless returns them, so they pass through digit for digit (API.md §2.1).
 * Nothing is clamped; null when the upstream has none.
 */
export type Priority = number | bigint | null;

/** One upstream HTTP router, normalised from either source. */
export interface UpstreamRouter {
  /** full key `name@provider`, e.g. `1-Nextcloud-router@http` */
  key: string;
  /** key without `@provider` */
  name: string;
  provider: string;
  rule: string;
  rule_syntax: string | null;
  entrypoints: string[];
  tls: ResourceTls | null;
  priority: Priority;
  /** as written upstream (unqualified in Pangolin and usually in Traefik) */
  service: string;
  middlewares: string[];
}

/** A resource as stored (API.md §4.4 Resource object without computed and timestamp fields). */
export interface ResourceRecord {
  id: string;
  name: string;
  router: string;
  /** `local`: defined by Stack Manager itself (API.md §4.24); never touched by discovery */
  source: SourceKind | 'local';
  status: 'active' | 'disabled';
  missing_since: string | null;
  rule: string;
  host: string | null;
  hosts: string[];
  entrypoints: string[];
  tls: ResourceTls | null;
  priority: Priority;
  upstream_service: string;
  upstream_middlewares: string[];
  middlewares: Array<{ id: string; priority: number }>;
  external_middlewares: Array<{ name: string; priority: number; provider: string | null }>;
  service_id: string | null;
  config: ResourceConfig;
  /** local resources built from `hosts`: the PathPrefix in their rule (API.md §4.24) */
  path_prefix?: string | null;
}

const INTEGER = /^-?[0-9]+$/;

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** Splits `name@provider` at the last `@`; no `@` gives provider ''. */
export function splitKey(key: string): { name: string; provider: string } {
  const at = key.lastIndexOf('@');
  return at < 0 ? { name: key, provider: '' } : { name: key.slice(0, at), provider: key.slice(at + 1) };
}

const withSuffix = (base: string, suffix: string) => base.slice(0, 63 - suffix.length) + suffix;

/** First free id among `base`, `base-<provider>`, `base-2`, `base-3`… (each cut to 63 chars). */
export function allocateId(base: string, provider: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  const providerSlug = slugify(provider, '');
  if (providerSlug && !taken.has(withSuffix(base, `-${providerSlug}`))) return withSuffix(base, `-${providerSlug}`);
  for (let n = 2; ; n++) {
    const id = withSuffix(base, `-${n}`);
    if (!taken.has(id)) return id;
  }
}

const toInteger = (text: string): number | bigint => (Number.isSafeInteger(Number(text)) ? Number(text) : BigInt(text));

/** Exact priority of a router object: Traefik's `priorityStr` (≥ 3.6.10) wins over `priority`. */
export function exactPriority(router: JsonObject): Priority {
  const text = router.priorityStr;
  if (typeof text === 'string' && INTEGER.test(text)) {
    // no `priority` and "0": Traefik never computed it (router disabled before building)
    if (!('priority' in router) && text === '0') return null;
    return toInteger(text);
  }
  const value = router.priority;
  if (typeof value === 'bigint') return toInteger(value.toString());
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && INTEGER.test(value)) return toInteger(value);
  return null;
}

const HOST_CALL = /(?<![A-Za-z0-9_])Host\(/g;

/** Every ``Host(`…`)`` value of a rule, in order, without duplicates (`Host(`a`, `b`)` lists too). */
export function hostsOf(rule: string): string[] {
  const hosts: string[] = [];
  for (const match of rule.matchAll(HOST_CALL)) {
    let i = match.index + match[0].length;
    for (;;) {
      while (rule[i] === ' ') i++;
      const quote = rule[i];
      if (quote !== '`' && quote !== '"') break;
      const end = rule.indexOf(quote, i + 1);
      if (end < 0) break;
      hosts.push(rule.slice(i + 1, end));
      i = end + 1;
      while (rule[i] === ' ') i++;
      if (rule[i] !== ',') break;
      i++;
    }
  }
  return [...new Set(hosts)];
}

function tlsOf(value: unknown): ResourceTls | null {
  if (!isObject(value)) return null;
  const domains = Array.isArray(value.domains)
    ? value.domains.filter(isObject).map((d) => ({ main: String(d.main ?? ''), sans: strings(d.sans) }))
    : [];
  // Traefik's router list adds options "default" that rawdata and Pangolin lack: same meaning, so
  // dropping it keeps the resource from flapping between syncs (G5 drops it when emitting too)
  const options = value.options === 'default' ? null : stringOrNull(value.options);
  return { cert_resolver: stringOrNull(value.certResolver), domains: domains.length > 0 ? domains : null, options };
}

function routerOf(name: string, provider: string, value: JsonObject): UpstreamRouter {
  return {
    key: `${name}@${provider}`,
    name,
    provider,
    rule: typeof value.rule === 'string' ? value.rule : '',
    rule_syntax: stringOrNull(value.ruleSyntax),
    entrypoints: strings(value.entryPoints),
    tls: tlsOf(value.tls),
    priority: exactPriority(value),
    service: typeof value.service === 'string' ? value.service : '',
    middlewares: strings(value.middlewares),
  };
}

/** HTTP routers of a Pangolin body (`http.routers`); every key becomes `<key>@http`. */
export function routersFromPangolin(body: unknown): UpstreamRouter[] {
  const routers = isObject(body) && isObject(body.http) ? body.http.routers : undefined;
  if (!isObject(routers)) return [];
  return Object.entries(routers)
    .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
    .map(([name, value]) => routerOf(name, 'http', value));
}

/** Routers of Traefik's `/api/http/routers` list (names already carry `@provider`). */
export function routersFromTraefik(list: unknown[]): UpstreamRouter[] {
  return list.filter(isObject).flatMap((item) => {
    if (typeof item.name !== 'string') return [];
    const split = splitKey(item.name);
    const provider = typeof item.provider === 'string' ? item.provider : split.provider;
    return [routerOf(split.provider ? split.name : item.name, provider, item)];
  });
}

/**
 * isOwnRouter/isOwnService for Traefik mode: what our provider emits is `<id>@<provider>` for our
 * ids, or contains `_` (`sm_…`, `<id>_tcp`), a character user ids never hold (API.md §2.8).
 */
export function ownObjectMatcher(ids: Iterable<string>, provider = 'http'): (key: string) => boolean {
  const own = new Set(ids);
  return (key) => {
    const split = splitKey(key);
    return split.provider === provider && (split.name.includes('_') || own.has(split.name));
  };
}
