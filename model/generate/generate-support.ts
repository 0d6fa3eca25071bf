/**
 * Shared state and small JSON helpers of the config generator (generate.ts, generate-resource.ts).
 */
import type { DiscoveredService, JsonObject, Middleware, MtlsState, Service } from '../types.ts';
import { isObject } from '../../core/ids.ts';

export interface Conflict {
  kind: 'middleware' | 'service' | 'router' | 'tls_options';
  key: string;
  message: string;
}

export interface DanglingReference {
  /** API path of the object holding the reference */
  from: string;
  /** API path of the missing object */
  ref: string;
}

export interface ResourceOutcome {
  effective_middlewares: string[];
  effective_service: string;
  emitted: boolean;
  warnings: string[];
}

/** One object a patch added with putNew. */
export interface Put {
  path: [string, string];
  key: string;
  value: unknown;
}

/** What patching one resource did to the config (generate-memo.ts replays it). */
export interface Recording {
  puts: Put[];
  /** Pangolin mode: the patched copy that replaced `http.routers[key]` */
  replaced: { key: string; router: JsonObject } | null;
  /** false when the result depends on more than the memo key (TCP routers read service bodies) */
  cacheable: boolean;
}

/** Lookup tables and accumulators of one generation run. */
export interface Emitter {
  mode: 'pangolin' | 'traefik' | 'none';
  config: JsonObject;
  mtls: MtlsState;
  /** mTLS globally enabled and a CA Traefik can read */
  mtlsReady: boolean;
  /** set once a patched resource puts mTLS in effect: the shared helpers are then emitted */
  mtlsUsed: boolean;
  middlewares: Map<string, Middleware>;
  services: Map<string, Service>;
  discovered: Map<string, DiscoveredService>;
  discoveredByUpstream: Map<string, DiscoveredService>;
  /** Traefik mode: runtime routers of `/api/http/routers` by full name */
  traefikRouters: Map<string, JsonObject>;
  conflicts: Conflict[];
  dangling: DanglingReference[];
  /** set while the memo records a patch */
  recording: Recording | null;
}

/** Deep copy of a JSON tree (BigInt kept); faster than structuredClone for parsed JSON. */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const copy = new Array(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = cloneJson(value[i]);
    return copy as T;
  }
  const source = value as JsonObject;
  const out: JsonObject = {};
  // keys in code-unit order already: the serializer then finds most of the tree sorted (G11)
  const keys = Object.keys(source).sort();
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    // a parsed "__proto__" key is data; plain assignment would change the prototype instead
    if (key === '__proto__')
      Object.defineProperty(out, key, {
        value: cloneJson(source[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[key] = cloneJson(source[key]);
  }
  return out as T;
}

/** Sets a key as data, also `__proto__` (plain assignment would change the prototype). */
function setOwn(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * Copy-on-write start of a generation (G2): the top level, the sections (`http`, `tcp`, …) and
 * their maps (`http.routers`, …) are copied with sorted keys; the objects in the maps are shared
 * with the upstream snapshot. Code that changes one of them copies it first (pangolinRouter), so
 * the snapshot is never mutated and unchanged upstream objects keep their identity from one
 * generation to the next (the serializer caches their JSON).
 */
export function copySections(upstream: JsonObject): JsonObject {
  const copyMap = (value: unknown, depth: number): unknown => {
    if (!isObject(value)) return value;
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort())
      setOwn(out, key, depth < 2 ? copyMap(value[key], depth + 1) : value[key]);
    return out;
  };
  return copyMap(upstream, 0) as JsonObject;
}

/** True when the object has at least one own key (without allocating a key array). */
export function hasKeys(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true;
  return false;
}

/** config[a][b], or undefined when either level is missing or not an object. */
export function findSection(config: JsonObject, a: string, b: string): JsonObject | undefined {
  const outer = config[a];
  const inner = isObject(outer) ? outer[b] : undefined;
  return isObject(inner) ? inner : undefined;
}

/** config[a][b], created when missing (an upstream non-object there is invalid and replaced). */
export function section(config: JsonObject, a: string, b: string): JsonObject {
  const found = config[a];
  const outer: JsonObject = isObject(found) ? found : (config[a] = {});
  const existing = outer[b];
  return isObject(existing) ? existing : (outer[b] = {});
}

/** Adds config[a][b][key] = value unless the key exists (upstream is never overwritten, G4). */
export function putNew(
  emitter: Emitter,
  kind: Conflict['kind'],
  path: [string, string],
  key: string,
  value: unknown,
): boolean {
  const target = section(emitter.config, path[0], path[1]);
  // hasOwn: ids such as "constructor" must not hit Object.prototype
  if (Object.hasOwn(target, key)) {
    emitter.conflicts.push({ kind, key, message: `${path.join('.')}.${key} already exists upstream; ours is skipped` });
    return false;
  }
  target[key] = value;
  emitter.recording?.puts.push({ path, key, value });
  return true;
}

/** Code-unit string order (the order of G11). */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** G7: the reference Traefik needs for service `id`, or null (warned or listed as dangling). */
export function resolveService(
  emitter: Emitter,
  id: string,
  protocol: string,
  from: string,
  warnings: string[],
): string | null {
  const ours = emitter.services.get(id);
  const discovered = ours ? undefined : emitter.discovered.get(id);
  const found = ours ?? discovered;
  if (!found) {
    emitter.dangling.push({ from, ref: `/api/services/${id}` });
    return null;
  }
  if ((found.protocol ?? 'http') !== protocol) {
    warnings.push(`service ${id} is a ${found.protocol} service; a ${protocol} service is needed: not applied`);
    return null;
  }
  if (ours) return id;
  if (emitter.mode === 'traefik') return discovered!.upstream_name;
  // Pangolin mode: the upstream key, which must still be in the upstream body
  const key = withoutProvider(discovered!.upstream_name);
  const defined = findSection(emitter.config, protocol, 'services');
  if (defined && Object.hasOwn(defined, key)) return key;
  emitter.dangling.push({ from, ref: `/api/services/${id}` });
  return null;
}

/** `name` without its `@provider` suffix. */
export function withoutProvider(name: string): string {
  const at = name.lastIndexOf('@');
  return at === -1 ? name : name.slice(0, at);
}
