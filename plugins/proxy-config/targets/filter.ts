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
 * `routersOf`: the router keys (any protocol) each known resource owns in the default document;
 * a resource id absent from it is reported as a dangling reference.
 */
export function targetConfig(
  config: JsonObject,
  id: string,
  target: TargetData,
  routersOf: ReadonlyMap<string, readonly string[]>,
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
  const matches = (key: string, router: unknown, by: { keys: Set<string>; hosts: readonly string[] }) =>
    by.keys.has(key) ||
    (by.hosts.length > 0 &&
      ruleHosts(isObject(router) ? router.rule : undefined).some((h) => hostMatches(h, by.hosts)));
  const keep = (key: string, router: unknown) =>
    (!include || matches(key, router, include)) && !matches(key, router, exclude);

  const ourMiddlewares = section(config, 'http', 'middlewares') ?? {};
  const extra: string[] = [];
  for (const mw of target.middlewares ?? []) {
    if (Object.hasOwn(ourMiddlewares, mw)) extra.push(mw);
    else dangling.push({ from, ref: `/api/middlewares/${mw}` });
  }
  const renames = target.entrypoints ?? {};

  const out: JsonObject = { ...config };
  for (const protocol of PROTOCOLS) {
    const routers = section(config, protocol, 'routers');
    if (!routers) continue;
    const kept: JsonObject = {};
    const dropped: JsonObject[] = [];
    for (const [key, router] of Object.entries(routers)) {
      if (!keep(key, router)) {
        if (isObject(router)) dropped.push(router);
        continue;
      }
      kept[key] = adjusted(router, protocol === 'http' ? extra : [], renames);
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

type Refs = (body: JsonObject) => unknown[];

const serviceRefs: Refs = (body) => {
  const names = (list: unknown) => (Array.isArray(list) ? list.map((e) => (isObject(e) ? e.name : undefined)) : []);
  const refs: unknown[] = [];
  if (isObject(body.weighted)) refs.push(...names(body.weighted.services));
  if (isObject(body.mirroring)) refs.push(body.mirroring.service, ...names(body.mirroring.mirrors));
  if (isObject(body.failover)) refs.push(body.failover.service, body.failover.fallback);
  return refs;
};

const middlewareRefs: Refs = (body) => (isObject(body.chain) ? asArray(body.chain.middlewares) : []);

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

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
  const direct = (router: JsonObject) => (kind === 'services' ? [router.service] : asArray(router.middlewares));
  const closure = (routers: JsonObject[]) => {
    const seen = new Set<string>();
    const pending = routers.flatMap(direct);
    while (pending.length > 0) {
      const ref = pending.pop();
      const name = typeof ref === 'string' ? local(ref) : null;
      if (name === null || seen.has(name) || !Object.hasOwn(objects, name)) continue;
      seen.add(name);
      const body = objects[name];
      if (isObject(body)) pending.push(...refsOf(body));
    }
    return seen;
  };
  const used = closure(kept);
  const unshared = [...closure(dropped)].filter((name) => !used.has(name));
  if (unshared.length === 0) return;
  const left: JsonObject = { ...objects };
  for (const name of unshared) delete left[name];
  part[kind] = left;
}
