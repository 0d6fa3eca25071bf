/**
 * A target's document derived from the default one (docs/API.md "Provider targets"): routers
 * selected by host glob / resource id, the services and middlewares only left-out routers used
 * dropped, entry points renamed, the target's middlewares appended to its HTTP routers. Pure: the
 * default config is shared (its objects are the generator's and the serializer's cache keys) and
 * never changed; changed routers and sections are new objects.
 */
import { isObject } from '../../../core/ids.ts';
import type { JsonObject } from '../../../model/types.ts';
import type { DanglingReference } from '../../../model/generate/generate.ts';
import { hostMatches, ruleHosts } from './globs.ts';
import type { TargetData, TargetSelection } from './schemas.ts';

const PROTOCOLS = ['http', 'tcp', 'udp'] as const;

export interface TargetOutput {
  config: JsonObject;
  dangling: DanglingReference[];
}

/**
 * What a target remembers per router object, for one version of the target (a new version needs a
 * new memo): host-glob verdicts and adjusted copies. Router objects are shared across generations
 * while unchanged, so a rebuild matches only new routers' rules, and an unchanged router keeps its
 * adjusted copy, which the serializer's fragment cache then recognises by identity.
 */
export interface TargetMemo {
  include: WeakMap<object, boolean>;
  exclude: WeakMap<object, boolean>;
  adjusted: WeakMap<object, unknown>;
  /** the appended middlewares the copies were made with (they depend on which ones exist) */
  extraKey: string;
}

export const newTargetMemo = (): TargetMemo => ({
  include: new WeakMap(),
  exclude: new WeakMap(),
  adjusted: new WeakMap(),
  extraKey: '',
});

/**
 * `routersOf`: the router keys (any protocol) each known resource owns in the default document;
 * a resource id absent from it is reported as a dangling reference.
 */
export function targetConfig(
  config: JsonObject,
  id: string,
  target: TargetData,
  routersOf: ReadonlyMap<string, readonly string[]>,
  memo: TargetMemo = newTargetMemo(),
): TargetOutput {
  const from = `/api/proxy-config/targets/${id}`;
  const dangling: DanglingReference[] = [];
  const selected = (selection: TargetSelection | undefined) => {
    const keys = new Set<string>();
    for (const resource of selection?.resources ?? []) {
      const owned = routersOf.get(resource);
      if (owned) for (const key of owned) keys.add(key);
      else dangling.push({ from, ref: `/api/resources/${resource}` });
    }
    return { keys, hosts: selection?.hosts ?? [] };
  };
  const include = target.include ? selected(target.include) : null;
  const exclude = selected(target.exclude);
  const hostsMatch = (router: unknown, globs: readonly string[], verdicts: WeakMap<object, boolean>) => {
    if (!isObject(router)) return false;
    let verdict = verdicts.get(router);
    if (verdict === undefined) {
      verdict = ruleHosts(router.rule).some((h) => hostMatches(h, globs));
      verdicts.set(router, verdict);
    }
    return verdict;
  };
  type Selected = { keys: Set<string>; hosts: readonly string[] };
  const matches = (key: string, router: unknown, by: Selected, verdicts: WeakMap<object, boolean>) =>
    by.keys.has(key) || (by.hosts.length > 0 && hostsMatch(router, by.hosts, verdicts));
  const keep = (key: string, router: unknown) =>
    (!include || matches(key, router, include, memo.include)) && !matches(key, router, exclude, memo.exclude);

  const ourMiddlewares = section(config, 'http', 'middlewares') ?? {};
  const extra: string[] = [];
  for (const mw of target.middlewares ?? []) {
    if (Object.hasOwn(ourMiddlewares, mw)) extra.push(mw);
    else dangling.push({ from, ref: `/api/middlewares/${mw}` });
  }
  const renames = target.entrypoints ?? {};
  if (memo.extraKey !== extra.join('\u0000')) {
    memo.adjusted = new WeakMap();
    memo.extraKey = extra.join('\u0000');
  }
  const adjustedOnce = (router: unknown, added: readonly string[]) => {
    if (!isObject(router)) return router;
    let copy = memo.adjusted.get(router);
    if (copy === undefined) memo.adjusted.set(router, (copy = adjusted(router, added, renames)));
    return copy;
  };

  const out: JsonObject = { ...config };
  for (const protocol of PROTOCOLS) {
    const routers = section(config, protocol, 'routers');
    if (!routers) continue;
    const kept: JsonObject = {};
    const dropped: JsonObject[] = [];
    for (const key of Object.keys(routers)) {
      const router = routers[key];
      if (!keep(key, router)) {
        if (isObject(router)) dropped.push(router);
        continue;
      }
      kept[key] = adjustedOnce(router, protocol === 'http' ? extra : NONE_STRINGS);
    }
    const part: JsonObject = { ...(config[protocol] as JsonObject), routers: kept };
    if (dropped.length > 0) {
      const keptRouters = Object.values(kept).filter(isObject);
      pruneUnshared(part, 'services', serviceRefs, keptRouters, dropped);
      if (protocol !== 'udp') pruneUnshared(part, 'middlewares', middlewareRefs, keptRouters, dropped);
    }
    out[protocol] = part;
  }
  return { config: out, dangling };
}

function section(config: JsonObject, protocol: string, kind: string): JsonObject | undefined {
  const part = config[protocol];
  const objects = isObject(part) ? part[kind] : undefined;
  return isObject(objects) ? objects : undefined;
}

/** The router itself when nothing changes for it, else a copy with renamed entry points and appended middlewares. */
function adjusted(router: unknown, extra: readonly string[], renames: Record<string, string>): unknown {
  if (!isObject(router)) return router;
  let copy: JsonObject | null = null;
  const entryPoints = router.entryPoints;
  if (Array.isArray(entryPoints) && entryPoints.some((e) => typeof e === 'string' && Object.hasOwn(renames, e))) {
    const renamed = entryPoints.map((e) => (typeof e === 'string' && Object.hasOwn(renames, e) ? renames[e] : e));
    copy = { ...router, entryPoints: [...new Set(renamed)] };
  }
  if (extra.length > 0) {
    const current = Array.isArray(router.middlewares) ? router.middlewares : [];
    const present = new Set(current.map((m) => (typeof m === 'string' ? local(m) : m)));
    const added = extra.filter((m) => !present.has(m));
    if (added.length > 0) copy = { ...(copy ?? router), middlewares: [...current, ...added] };
  }
  return copy ?? router;
}

/** A reference to an object of this document: `name` or `name@http`; other providers' names are null. */
function local(ref: string): string | null {
  const at = ref.indexOf('@');
  if (at < 0) return ref;
  return ref.slice(at + 1) === 'http' ? ref.slice(0, at) : null;
}

type Refs = (body: JsonObject) => readonly unknown[];

const NONE: readonly unknown[] = [];
const NONE_STRINGS: readonly string[] = [];

const serviceRefs: Refs = (body) => {
  if (!body.weighted && !body.mirroring && !body.failover) return NONE; // a load balancer: the usual case
  const names = (list: unknown) => (Array.isArray(list) ? list.map((e) => (isObject(e) ? e.name : undefined)) : []);
  const refs: unknown[] = [];
  if (isObject(body.weighted)) refs.push(...names(body.weighted.services));
  if (isObject(body.mirroring)) refs.push(body.mirroring.service, ...names(body.mirroring.mirrors));
  if (isObject(body.failover)) refs.push(body.failover.service, body.failover.fallback);
  return refs;
};

const middlewareRefs: Refs = (body) =>
  isObject(body.chain) && Array.isArray(body.chain.middlewares) ? body.chain.middlewares : NONE;

/**
 * Removes from `part[kind]` what the dropped routers use (directly or through weighted services
 * and chains) and no kept router uses; objects no router uses at all stay (other providers may
 * name them as `<name>@http`).
 */
function pruneUnshared(
  part: JsonObject,
  kind: 'services' | 'middlewares',
  refsOf: Refs,
  kept: JsonObject[],
  dropped: JsonObject[],
): void {
  const objects = isObject(part[kind]) ? part[kind] : undefined;
  if (!objects) return;
  // no intermediate arrays: at 10,000 resources this runs over ~20,000 routers per rebuild
  const closure = (routers: JsonObject[]) => {
    const seen = new Set<string>();
    const visit = (ref: unknown): void => {
      const name = typeof ref === 'string' ? local(ref) : null;
      if (name === null || seen.has(name) || !Object.hasOwn(objects, name)) return;
      seen.add(name);
      const body = objects[name];
      // depth is that of nested weighted services or chains; `seen` cuts cycles
      if (isObject(body)) for (const next of refsOf(body)) visit(next);
    };
    for (const router of routers) {
      if (kind === 'services') visit(router.service);
      else if (Array.isArray(router.middlewares)) for (const m of router.middlewares) visit(m);
    }
    return seen;
  };
  const used = closure(kept);
  const unshared = new Set([...closure(dropped)].filter((name) => !used.has(name)));
  if (unshared.size === 0) return;
  // a new object with the kept entries (deleting thousands of keys from a copy is much slower)
  const left: JsonObject = {};
  for (const name of Object.keys(objects)) if (!unshared.has(name)) left[name] = objects[name];
  part[kind] = left;
}
