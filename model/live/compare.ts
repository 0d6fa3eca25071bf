/**
 * The pure comparison of API.md §4.19: what we served against what one Traefik instance reports.
 * Each router of a served document gets a digest once per generation (a normalized string of the
 * fields we set); Traefik's router is normalized the same way, restricted to the fields our router
 * sets, so what Traefik fills in by itself (default entry points, the priority it computes from the
 * rule length, TLS options "default") never counts as a difference.
 */
import type { JsonObject } from '../types.ts';
import { LIVE_STATES_WORST_FIRST, type InstanceReading, type LiveState, type TraefikObject } from './types.ts';

export interface ExpectedRouter {
  /** Traefik's full name: `<key>@http` for keys of our document's http.routers */
  name: string;
  /** normalized rule|service|middlewares-in-order|priority|entryPoints|tls of what we emit */
  digest: string;
  /** which optional fields `digest` holds (FIELD_* bits); Traefik's router is digested with the same */
  fields?: number;
  /** the digest's values one by one, so a Traefik router is compared without building its digest */
  values?: RouterValues;
}

/** Normalized values of what we emit (service and middlewares qualified, entry points as a sorted set). */
export interface RouterValues {
  rule: string;
  service: string;
  middlewares: string[];
  /** '' when not compared */
  priority: string;
  entryPoints: string;
  tls: boolean;
  certResolver: string;
  options: string;
  domains: string;
}

export interface ExpectedDocument {
  /** the served document's ETag */
  etag: string;
  /** epoch ms */
  generated_at: number;
  /** the served (gated) document, never mutated */
  config: JsonObject;
  /** by full name, every router of config.http.routers */
  routers: Map<string, ExpectedRouter>;
  /**
   * Full names (`<key>@http`) of the document's other objects, by list (`http.middlewares`,
   * `http.services`, `tcp.routers`, …): Traefik's API lists every configured middleware and service,
   * used or not, so these tell documents apart that differ in no router. Absent: not compared.
   */
  objects?: Map<ObjectList, Set<string>>;
}

/** The lists of Traefik's API, besides the HTTP routers, that runsDocument compares by name. */
export const OBJECT_LISTS = [
  ['http', 'middlewares'],
  ['http', 'services'],
  ['tcp', 'routers'],
  ['tcp', 'services'],
  ['tcp', 'middlewares'],
  ['udp', 'routers'],
  ['udp', 'services'],
] as const;
export type ObjectList = `${(typeof OBJECT_LISTS)[number][0]}.${(typeof OBJECT_LISTS)[number][1]}`;

/** The error of a resource whose router is not in the served document (state `unknown`). */
export const NOT_IN_DOCUMENT = 'not in the served document';

/** Optional fields of a digest: compared only when our router sets them. */
const FIELD_PRIORITY = 1;
const FIELD_ENTRY_POINTS = 2;
const FIELD_TLS_RESOLVER = 4;
const FIELD_TLS_OPTIONS = 8;
const FIELD_TLS_DOMAINS = 16;

/** Separators that cannot occur in rules or names Traefik accepts. */
const FIELD_SEPARATOR = '\u0000';
const ITEM_SEPARATOR = '\u0001';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A reference as Traefik resolves it inside the HTTP provider: no `@` → `@http`. */
const qualify = (name: string): string => (name === '' || name.includes('@') ? name : `${name}@http`);

/**
 * A priority as a decimal string, exact for BigInt and for integers beyond 2^53 written as strings;
 * '' when unset. 0 counts as unset: Traefik then computes the priority from the rule length, as
 * for a router without one.
 */
function priorityText(value: unknown): string {
  if (typeof value === 'bigint') return value === 0n ? '' : value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value === 0) return '';
    return Number.isInteger(value) ? BigInt(value).toString() : String(value);
  }
  if (typeof value === 'string') {
    // the usual case (Traefik's priorityStr): digits without a leading zero
    const first = value.charCodeAt(0);
    if (first >= 49 && first <= 57 && /^\d+$/.test(value)) return value;
    const trimmed = value.trim();
    return trimmed === '' || /^-?0+$/.test(trimmed) ? '' : trimmed.replace(/^(-?)0+(?=\d)/, '$1');
  }
  return '';
}

function listOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function domainsText(value: unknown): string {
  if (!Array.isArray(value)) return '';
  return value
    .map((domain) => (isObject(domain) ? `${text(domain.main)}|${listOf(domain.sans).join(',')}` : ''))
    .join(';');
}

/** The fields our router sets (a router without them leaves Traefik's defaults uncompared). */
function fieldsOf(router: Record<string, unknown>): number {
  let fields = 0;
  if (priorityText(router.priority) !== '') fields |= FIELD_PRIORITY;
  if (Array.isArray(router.entryPoints) && router.entryPoints.length > 0) fields |= FIELD_ENTRY_POINTS;
  const tls = router.tls;
  if (isObject(tls)) {
    if (text(tls.certResolver) !== '') fields |= FIELD_TLS_RESOLVER;
    if (text(tls.options) !== '') fields |= FIELD_TLS_OPTIONS;
    if (Array.isArray(tls.domains) && tls.domains.length > 0) fields |= FIELD_TLS_DOMAINS;
  }
  return fields;
}

/** Named parts of a digest, in digest order (also used to say which fields of an outdated router differ). */
function routerParts(router: Record<string, unknown>, fields: number, traefik: boolean): Array<[string, string]> {
  const parts: Array<[string, string]> = [
    ['rule', text(router.rule)],
    ['service', qualify(text(router.service))],
    ['middlewares', listOf(router.middlewares).map(qualify).join(ITEM_SEPARATOR)],
  ];
  if (fields & FIELD_PRIORITY) {
    // Traefik's priorityStr is exact; `priority` may have been rounded by a plain JSON parse
    const priority = traefik && typeof router.priorityStr === 'string' ? router.priorityStr : router.priority;
    parts.push(['priority', priorityText(priority)]);
  }
  if (fields & FIELD_ENTRY_POINTS) {
    parts.push(['entryPoints', entryPointsText(router.entryPoints)]);
  }
  const tls = router.tls;
  parts.push(['tls', isObject(tls) ? 'on' : 'off']);
  if (isObject(tls)) {
    if (fields & FIELD_TLS_RESOLVER) parts.push(['tls.certResolver', text(tls.certResolver)]);
    if (fields & FIELD_TLS_OPTIONS) parts.push(['tls.options', text(tls.options) || 'default']);
    if (fields & FIELD_TLS_DOMAINS) parts.push(['tls.domains', domainsText(tls.domains)]);
  }
  return parts;
}

/** Entry points as a set: sorted, without duplicates. */
function entryPointsText(value: unknown): string {
  const list = listOf(value);
  return list.length === 1 ? list[0] : [...new Set(list)].sort().join(ITEM_SEPARATOR);
}

/**
 * The digest of `router` restricted to `fields`: the values of routerParts, built straight into one
 * string (this runs for every router of every reading; routerParts only for outdated ones).
 */
function digestOf(router: Record<string, unknown>, fields: number, traefik: boolean): string {
  let digest = text(router.rule) + FIELD_SEPARATOR + qualify(text(router.service)) + FIELD_SEPARATOR;
  const middlewares = router.middlewares;
  if (Array.isArray(middlewares)) {
    for (let i = 0; i < middlewares.length; i++) {
      if (typeof middlewares[i] !== 'string') continue;
      digest += (i === 0 ? '' : ITEM_SEPARATOR) + qualify(middlewares[i]);
    }
  }
  digest += FIELD_SEPARATOR;
  if (fields & FIELD_PRIORITY) {
    const priority = traefik && typeof router.priorityStr === 'string' ? router.priorityStr : router.priority;
    digest += priorityText(priority) + FIELD_SEPARATOR;
  }
  if (fields & FIELD_ENTRY_POINTS) digest += entryPointsText(router.entryPoints) + FIELD_SEPARATOR;
  const tls = router.tls;
  if (!isObject(tls)) return digest + 'off' + FIELD_SEPARATOR;
  digest += 'on' + FIELD_SEPARATOR;
  if (fields & FIELD_TLS_RESOLVER) digest += text(tls.certResolver) + FIELD_SEPARATOR;
  if (fields & FIELD_TLS_OPTIONS) digest += (text(tls.options) || 'default') + FIELD_SEPARATOR;
  if (fields & FIELD_TLS_DOMAINS) digest += domainsText(tls.domains) + FIELD_SEPARATOR;
  return digest;
}

/** Traefik's router digested with the fields `expected` sets. */
export function traefikDigest(router: TraefikObject, expected: ExpectedRouter): string {
  return digestOf(router, expected.fields ?? 0, true);
}

function valuesOf(router: Record<string, unknown>): RouterValues {
  const tls = isObject(router.tls) ? router.tls : null;
  return {
    rule: text(router.rule),
    service: qualify(text(router.service)),
    middlewares: listOf(router.middlewares).map(qualify),
    priority: priorityText(router.priority),
    entryPoints: entryPointsText(router.entryPoints),
    tls: tls !== null,
    certResolver: text(tls?.certResolver),
    options: text(tls?.options) || 'default',
    domains: domainsText(tls?.domains),
  };
}

/** `reference` as Traefik lists it names `qualified` (ours, qualified): no string is built. */
function sameReference(reference: unknown, qualified: string): boolean {
  if (typeof reference !== 'string') return false;
  if (reference === qualified) return true;
  return (
    qualified.length === reference.length + 5 &&
    qualified.endsWith('@http') &&
    qualified.startsWith(reference) &&
    !reference.includes('@')
  );
}

/**
 * Whether Traefik's router equals what we emit (the same test as comparing digests, field by field
 * without allocating: this runs for every router of every reading).
 */
export function matchesExpected(router: TraefikObject, expected: ExpectedRouter): boolean {
  const want = expected.values;
  if (!want) return traefikDigest(router, expected) === expected.digest;
  const fields = expected.fields ?? 0;
  if (text(router.rule) !== want.rule || !sameReference(router.service ?? '', want.service)) return false;
  const middlewares = Array.isArray(router.middlewares) ? router.middlewares : [];
  if (middlewares.length !== want.middlewares.length) return false;
  for (let i = 0; i < middlewares.length; i++) if (!sameReference(middlewares[i], want.middlewares[i])) return false;
  if (fields & FIELD_PRIORITY) {
    const priority = typeof router.priorityStr === 'string' ? router.priorityStr : router.priority;
    if (priorityText(priority) !== want.priority) return false;
  }
  if (fields & FIELD_ENTRY_POINTS && entryPointsText(router.entryPoints) !== want.entryPoints) return false;
  const tls = router.tls;
  if (isObject(tls) !== want.tls) return false;
  if (!isObject(tls)) return true;
  if (fields & FIELD_TLS_RESOLVER && text(tls.certResolver) !== want.certResolver) return false;
  if (fields & FIELD_TLS_OPTIONS && (text(tls.options) || 'default') !== want.options) return false;
  return !(fields & FIELD_TLS_DOMAINS) || domainsText(tls.domains) === want.domains;
}

function httpRouters(config: JsonObject): Record<string, unknown> {
  const http = config.http;
  return isObject(http) && isObject(http.routers) ? http.routers : {};
}

/** An expected router; its digest string is built on first use (comparisons use `values`). */
class Expected implements ExpectedRouter {
  readonly values: RouterValues;
  private built: string | null = null;
  constructor(
    readonly name: string,
    private readonly router: Record<string, unknown>,
    readonly fields: number,
  ) {
    this.values = valuesOf(router);
  }
  get digest(): string {
    this.built ??= digestOf(this.router, this.fields, false);
    return this.built;
  }
}

/** Precomputes digests of every http router of the served document (called once per generation). */
export function expectDocument(served: JsonObject, etag: string, generatedAt: number): ExpectedDocument {
  const routers = new Map<string, ExpectedRouter>();
  for (const [key, router] of Object.entries(httpRouters(served))) {
    if (!isObject(router)) continue;
    const fields = fieldsOf(router);
    const name = `${key}@http`;
    routers.set(name, new Expected(name, router, fields));
  }
  const objects = new Map<ObjectList, Set<string>>();
  for (const [protocol, kind] of OBJECT_LISTS) {
    const section = served[protocol];
    const list = isObject(section) ? section[kind] : undefined;
    objects.set(`${protocol}.${kind}`, new Set(isObject(list) ? Object.keys(list).map((key) => `${key}@http`) : []));
  }
  return { etag, generated_at: generatedAt, config: served, routers, objects };
}

/**
 * The fields in which Traefik's router differs from our router `name` of `doc` (e.g. `['service']`),
 * for the errors of an outdated resource; [] when equal or when `doc` has no such router.
 */
export function routerDifferences(router: TraefikObject, doc: ExpectedDocument, name: string): string[] {
  const expected = doc.routers.get(name);
  const ours = httpRouters(doc.config)[name.slice(0, -'@http'.length)];
  if (!expected || !isObject(ours)) return [];
  const fields = expected.fields ?? 0;
  const want = routerParts(ours, fields, false);
  const have = routerParts(router, fields, true);
  const differences: string[] = [];
  for (let i = 0; i < want.length; i++) {
    // tls sub-fields are absent from one side when TLS itself differs: report 'tls' once
    if (have[i]?.[0] !== want[i][0]) {
      if (!differences.includes('tls')) differences.push('tls');
      break;
    }
    if (have[i][1] !== want[i][1]) differences.push(want[i][0]);
  }
  return differences;
}

/**
 * The Traefik name of the router that carries a resource in `doc`, or null when it has none:
 * Pangolin mode: `<resource.router without @provider>@http` when that key is in doc http.routers;
 * Traefik mode: `<resource.id>@http` when outcome.emitted, else resource.router itself (e.g. `x@docker`, checked for status only).
 */
export function resourceRouterName(
  resource: { id: string; router: string },
  emitted: boolean,
  mode: 'pangolin' | 'traefik',
  doc: ExpectedDocument,
): string | null {
  if (mode === 'pangolin') {
    const at = resource.router.lastIndexOf('@');
    const name = `${at < 0 ? resource.router : resource.router.slice(0, at)}@http`;
    return doc.routers.has(name) ? name : null;
  }
  if (emitted) {
    const name = `${resource.id}@http`;
    return doc.routers.has(name) ? name : null;
  }
  return resource.router === '' ? null : resource.router;
}

const isOurs = (name: unknown): name is string => typeof name === 'string' && name.endsWith('@http');

/**
 * True when the instance's @http routers are exactly doc's routers with equal digests, and its other
 * @http objects (middlewares, services, TCP/UDP routers and services) have exactly doc's names: a
 * document Traefik refused that adds or removes only a middleware or a service is not run.
 */
export function runsDocument(reading: InstanceReading, doc: ExpectedDocument): boolean {
  let ours = 0;
  for (const router of reading.http.routers) {
    const name = router.name;
    if (!isOurs(name)) continue;
    ours += 1;
    const expected = doc.routers.get(name);
    if (!expected || !matchesExpected(router, expected)) return false;
  }
  return ours === doc.routers.size && sameObjects(reading, doc);
}

/** The instance's @http objects of every OBJECT_LISTS list are exactly the names of doc's. */
function sameObjects(reading: InstanceReading, doc: ExpectedDocument): boolean {
  if (!doc.objects) return true;
  for (const [protocol, kind] of OBJECT_LISTS) {
    const expected = doc.objects.get(`${protocol}.${kind}`);
    if (!expected) continue;
    const list: readonly TraefikObject[] = (reading[protocol] as Record<string, TraefikObject[]>)[kind] ?? [];
    let ours = 0;
    for (const object of list) {
      const name = object.name;
      if (!isOurs(name)) continue;
      if (!expected.has(name)) return false;
      ours += 1;
    }
    if (ours !== expected.size) return false;
  }
  return true;
}

/**
 * Dotted key paths present in `newer` and absent in `older` (e.g. `tcp.services.x.loadBalancer.sticky`),
 * at most `limit`, sorted. A new object is named once (its own path, not each key inside it); array
 * items are compared index by index, items beyond `older`'s length against its first item.
 */
export function newKeys(older: JsonObject, newer: JsonObject, limit = 20): string[] {
  const found: string[] = [];
  // depth-first over sorted keys, so the first `limit` found are the first in order; iterative
  // (documents nest at most 64 levels, but no recursion is needed); `older: ABSENT` = a new key
  type Step = { path: string; older: unknown; newer: unknown };
  const ABSENT = Symbol('absent');
  const stack: Step[] = [{ path: '', older, newer }];
  while (stack.length > 0 && found.length < limit) {
    const { path, older: was, newer: is } = stack.pop()!;
    if (was === ABSENT) {
      found.push(path);
      continue;
    }
    const prefix = path === '' ? '' : `${path}.`;
    const next: Step[] = [];
    if (Array.isArray(is)) {
      if (!Array.isArray(was) || was.length === 0) continue;
      for (let i = 0; i < is.length; i++)
        next.push({ path: `${prefix}${i}`, older: i < was.length ? was[i] : was[0], newer: is[i] });
    } else if (isObject(is) && isObject(was)) {
      for (const key of Object.keys(is).sort()) {
        if (!Object.hasOwn(was, key)) next.push({ path: prefix + key, older: ABSENT, newer: undefined });
        else if (typeof is[key] === 'object' && is[key] !== null)
          next.push({ path: prefix + key, older: was[key], newer: is[key] });
      }
    }
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
  }
  return found.sort();
}

function indexByName(routers: readonly TraefikObject[]): Map<string, TraefikObject> {
  const index = new Map<string, TraefikObject>();
  for (const router of routers) if (typeof router.name === 'string') index.set(router.name, router);
  return index;
}

const errorsOf = (object: TraefikObject): string[] => listOf(object.error);

/**
 * Per resource: its state in this instance and Traefik's error texts verbatim.
 * `accepted`: the documents this instance may run without being outdated (the latest, plus those still within the settle time).
 * unreachable reading → every resource `unknown` with [reading.error].
 */
export function instanceStates(
  reading: InstanceReading,
  accepted: ExpectedDocument[],
  routerOf: ReadonlyMap<string, string>,
): Map<string, { state: LiveState; errors: string[] }> {
  const states = new Map<string, { state: LiveState; errors: string[] }>();
  if (!reading.reachable) {
    const errors = [reading.error ?? 'Traefik API unreachable'];
    for (const id of routerOf.keys()) states.set(id, { state: 'unknown', errors });
    return states;
  }
  const http = indexByName(reading.http.routers);
  // other providers' TCP/UDP routers (Traefik mode, not emitted) are looked up only when asked for
  let others: Map<string, TraefikObject> | null = null;
  let latest: ExpectedDocument | null = null;
  for (const doc of accepted) if (!latest || doc.generated_at > latest.generated_at) latest = doc;

  for (const [id, name] of routerOf) {
    let router = http.get(name);
    if (!router && !isOurs(name)) {
      others ??= indexByName([...reading.tcp.routers, ...reading.udp.routers]);
      router = others.get(name);
    }
    if (!router) {
      states.set(id, { state: 'missing', errors: [`Traefik has no router ${name}`] });
      continue;
    }
    const errors = errorsOf(router);
    if (router.status === 'disabled') {
      states.set(id, { state: 'disabled', errors });
      continue;
    }
    if (isOurs(name)) {
      let compared = false;
      let equal = false;
      for (const doc of accepted) {
        const expected = doc.routers.get(name);
        if (!expected) continue;
        compared = true;
        if (matchesExpected(router, expected)) {
          equal = true;
          break;
        }
      }
      if (compared && !equal) {
        const against = latest && latest.routers.has(name) ? latest : accepted.find((doc) => doc.routers.has(name))!;
        const fields = routerDifferences(router, against, name);
        states.set(id, {
          state: 'outdated',
          errors: [
            ...errors,
            `Traefik runs another version of this router${fields.length > 0 ? ` (differs in ${fields.join(', ')})` : ''}`,
          ],
        });
        continue;
      }
    }
    states.set(id, { state: router.status === 'warning' ? 'warning' : 'live', errors });
  }
  return states;
}

const RANK = new Map(LIVE_STATES_WORST_FIRST.map((state, i) => [state, i]));

/** The worst of `states` (LIVE_STATES_WORST_FIRST); empty → 'unknown'. */
export function worstState(states: Iterable<LiveState>): LiveState {
  let worst: LiveState = 'unknown';
  let rank = RANK.get('unknown')!;
  for (const state of states) {
    const r = RANK.get(state) ?? rank;
    if (r < rank) {
      rank = r;
      worst = state;
    }
  }
  return worst;
}
