/**
 * Pure generation of the Traefik dynamic configuration served to Traefik's HTTP provider
 * (API.md §4.9, rules G2, G4–G10). No I/O: callers pass every input and get a plain object back.
 */
import type { DiscoveredService, JsonObject, Middleware, MtlsState, Resource, Service } from '../types.ts';
import type { Conflict, DanglingReference, Recording, ResourceOutcome } from './generate-support.ts';
import { compare, copySections, findSection, putNew, type Emitter } from './generate-support.ts';
import { isObject } from '../../core/ids.ts';
import { patchResource } from './generate-resource.ts';
import type { PatchMemo } from './generate-memo.ts';
import { serviceReferences, servicesToEmit } from './services-in-use.ts';

/**
 * What one generation reads. Stored objects come in as they are held in memory and are never
 * changed (the memo and the caches key on their identity): the lists are read-only here, and the
 * memo keeps what it remembers as DeepReadonly (generate-memo.ts).
 */
export interface GenerationInput {
  /** `none`: no data source (API.md §4.24): only our own objects and local resources */
  readonly mode: 'pangolin' | 'traefik' | 'none';
  /** Pangolin mode: the upstream config body. Traefik mode: Traefik's `/api/http/routers` list (or null). */
  readonly upstream: unknown;
  readonly middlewares: readonly Middleware[];
  /** manual and template services: manual ones are emitted, template ones once used (services-in-use.ts) */
  readonly services: readonly Service[];
  readonly discoveredServices: readonly DiscoveredService[];
  readonly resources: readonly Resource[];
  readonly mtls: MtlsState;
}

export type { Conflict, DanglingReference, ResourceOutcome } from './generate-support.ts';

export interface GenerationCounts {
  routers: number;
  services: number;
  middlewares: number;
  patched_routers: number;
}

export interface GenerationResult {
  config: JsonObject;
  conflicts: Conflict[];
  dangling_references: DanglingReference[];
  resources: Record<string, ResourceOutcome>;
  counts: GenerationCounts;
}

/**
 * Builds the generated config from upstream + store objects; never mutates its input. With a memo
 * (kept across generations), resources whose inputs did not change reuse their previous patch.
 */
export function generateConfig(input: GenerationInput, memo?: PatchMemo): GenerationResult {
  // G2: Pangolin mode keeps every upstream section (copy-on-write: see copySections)
  const config: JsonObject = input.mode === 'pangolin' && isObject(input.upstream) ? copySections(input.upstream) : {};
  const emitter = createEmitter(input, config);

  emitMiddlewares(emitter, input.middlewares);
  const emittedServices = servicesToEmit(input.services, input.resources);
  emitServices(emitter, emittedServices);

  const resources: Record<string, ResourceOutcome> = {};
  let patched = 0;
  // by id, so that two resources claiming the same router always resolve the same way
  const ordered = sortedById(input.resources);
  memo?.begin(input);
  for (const resource of ordered) {
    const outcome = memo
      ? (memo.replay(emitter, resource) ?? patchRecorded(emitter, resource, memo))
      : patchResource(emitter, resource);
    if (outcome.emitted) patched += 1;
    resources[resource.id] = outcome;
  }
  memo?.end();
  if (emitter.mtlsUsed) emitMtlsHelpers(emitter, input.mtls);

  checkChainMembers(emitter, input.middlewares);
  checkServiceReferences(emitter, emittedServices);

  return {
    config,
    conflicts: emitter.conflicts.sort((a, b) => compare(a.kind + '\0' + a.key, b.kind + '\0' + b.key)),
    dangling_references: dedupeDangling(emitter.dangling),
    resources,
    counts: countObjects(config, patched),
  };
}

function createEmitter(input: GenerationInput, config: JsonObject): Emitter {
  const traefikRouters = new Map<string, JsonObject>();
  if (input.mode === 'traefik' && Array.isArray(input.upstream)) {
    for (const router of input.upstream) {
      if (isObject(router) && typeof router.name === 'string') traefikRouters.set(router.name, router);
    }
  }
  const discoveredByUpstream = new Map<string, DiscoveredService>();
  for (const d of input.discoveredServices) discoveredByUpstream.set(d.upstream_name, d);
  return {
    mode: input.mode,
    config,
    mtls: input.mtls,
    // mTLS needs a CA that Traefik can read: inline PEM or a path (G8)
    mtlsReady: input.mtls.enabled && (input.mtls.ca_pem !== null || input.mtls.proxy_ca_path !== null),
    mtlsUsed: false,
    middlewares: new Map(input.middlewares.map((m) => [m.id, m])),
    services: new Map(input.services.map((s) => [s.id, s])),
    discovered: new Map(input.discoveredServices.map((d) => [d.id, d])),
    discoveredByUpstream,
    traefikRouters,
    conflicts: [],
    dangling: [],
    recording: null,
  };
}

/** G4: every middleware of ours, assigned or not, so other providers can use `<id>@http`. */
function emitMiddlewares(emitter: Emitter, middlewares: readonly Middleware[]): void {
  for (const m of middlewares) {
    // config objects are shared, not copied: nothing changes them after this point (the serializer
    // then finds the same object in every generation and reuses its JSON)
    putNew(emitter, 'middleware', ['http', 'middlewares'], m.id, wrapped(m.type, m.config));
  }
}

const wrappers = new WeakMap<JsonObject, { type: string; wrapper: JsonObject }>();

/**
 * `{[type]: config}`, the same object for as long as the stored config object is the same: the
 * serializer and the schema check then recognise an unchanged middleware or service by identity.
 */
function wrapped(type: string, config: JsonObject): JsonObject {
  if (typeof config !== 'object' || config === null) return { [type]: config };
  const known = wrappers.get(config);
  if (known && known.type === type) return known.wrapper;
  const wrapper = { [type]: config };
  wrappers.set(config, { type, wrapper });
  return wrapper;
}

/** G4: our services go to the section of their protocol. */
function emitServices(emitter: Emitter, services: readonly Service[]): void {
  for (const s of services) {
    putNew(emitter, 'service', [s.protocol ?? 'http', 'services'], s.id, wrapped(s.type, s.config));
  }
}

/** G8: shared mTLS objects, emitted once when at least one patched resource uses mTLS. */
function emitMtlsHelpers(emitter: Emitter, mtls: MtlsState): void {
  putNew(emitter, 'middleware', ['http', 'middlewares'], 'sm_mtls_passcert', { passTLSClientCert: { pem: true } });
  putNew(emitter, 'middleware', ['http', 'middlewares'], 'sm_mtls_verify', {
    forwardAuth: { address: mtls.verify_url },
  });
  const caFile = mtls.proxy_ca_path ?? mtls.ca_pem;
  // with the plugin, the plugin itself rejects requests without a certificate (and answers nicely)
  const clientAuthType = mtls.plugin?.installed ? 'VerifyClientCertIfGiven' : 'RequireAndVerifyClientCert';
  putNew(emitter, 'tls_options', ['tls', 'options'], 'sm_mtls', {
    clientAuth: { caFiles: [caFile], clientAuthType },
    minVersion: 'VersionTLS12',
    sniStrict: true,
  });
}

/** G10: chain members without `@` must exist in the generated config; they are listed, not removed. */
function checkChainMembers(emitter: Emitter, middlewares: readonly Middleware[]): void {
  const defined = findSection(emitter.config, 'http', 'middlewares') ?? {};
  for (const m of middlewares) {
    if (m.type !== 'chain' || !Array.isArray(m.config.middlewares)) continue;
    for (const member of m.config.middlewares) {
      if (typeof member === 'string' && !member.includes('@') && !Object.hasOwn(defined, member)) {
        emitter.dangling.push({ from: `/api/middlewares/${m.id}`, ref: `/api/middlewares/${member}` });
      }
    }
  }
}

/** G10: service references inside our services (weighted, mirroring, failover). */
function checkServiceReferences(emitter: Emitter, services: readonly Service[]): void {
  for (const s of services) {
    const protocol = s.protocol ?? 'http';
    const defined = findSection(emitter.config, protocol, 'services') ?? {};
    for (const ref of serviceReferences(s)) {
      if (!ref.includes('@') && !Object.hasOwn(defined, ref)) {
        emitter.dangling.push({ from: `/api/services/${s.id}`, ref: `/api/services/${ref}` });
      }
    }
  }
}

/** The list itself when already in id order (the store's usual order), else a sorted copy. */
/**
 * Patches one resource while recording what it writes, and hands the result to the memo. The
 * emitter's recording and mTLS flag are the generator's own fields: only this function sets them.
 */
function patchRecorded(emitter: Emitter, resource: Resource, memo: PatchMemo): ResourceOutcome {
  const key = memo.keyOf(emitter, resource);
  const recording: Recording = { puts: [], replaced: null, cacheable: true };
  const danglingFrom = emitter.dangling.length;
  const conflictsFrom = emitter.conflicts.length;
  const mtlsBefore = emitter.mtlsUsed;
  emitter.mtlsUsed = false;
  emitter.recording = recording;
  let outcome: ResourceOutcome;
  try {
    outcome = patchResource(emitter, resource);
  } finally {
    emitter.recording = null;
  }
  const mtlsUsed = emitter.mtlsUsed;
  emitter.mtlsUsed = mtlsBefore || mtlsUsed;
  const clean = emitter.conflicts.length === conflictsFrom;
  memo.remember(resource, key, { recording, dangling: emitter.dangling.slice(danglingFrom), mtlsUsed, outcome, clean });
  return outcome;
}

function sortedById(resources: readonly Resource[]): readonly Resource[] {
  for (let i = 1; i < resources.length; i++) {
    if (resources[i - 1].id > resources[i].id) return [...resources].sort((a, b) => compare(a.id, b.id));
  }
  return resources;
}

function dedupeDangling(list: DanglingReference[]): DanglingReference[] {
  const seen = new Map<string, DanglingReference>();
  for (const d of list) seen.set(d.from + '\0' + d.ref, d);
  return [...seen.entries()].sort((a, b) => compare(a[0], b[0])).map(([, d]) => d);
}

function countObjects(config: JsonObject, patched: number): GenerationCounts {
  const size = (protocol: string, kind: string) => {
    const part = config[protocol];
    const objects = isObject(part) ? part[kind] : undefined;
    return isObject(objects) ? Object.keys(objects).length : 0;
  };
  return {
    routers: size('http', 'routers') + size('tcp', 'routers') + size('udp', 'routers'),
    services: size('http', 'services') + size('tcp', 'services') + size('udp', 'services'),
    middlewares: size('http', 'middlewares') + size('tcp', 'middlewares'),
    patched_routers: patched,
  };
}
