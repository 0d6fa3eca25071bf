/**
 * Per-resource memo of the generator (API.md §4.9): regeneration at 10,000 routers costs what changed.
 *
 * Patching a resource is a pure function of: the resource record, the object it patches (the
 * upstream router in Pangolin mode, the runtime router in Traefik mode), what its references
 * resolve to (whether each assigned middleware exists, what its service id names) and a small
 * environment (mode, mTLS state). When none of these changed since the previous generation, the
 * memo replays
 * what patching did (the objects it put, the router it replaced, its dangling references) instead of
 * patching again. The replayed objects are the same objects as before, so the serializer's
 * FragmentCache also finds their JSON: an edit of one middleware no longer rebuilds and
 * re-serialises 10,000 routers.
 *
 * Anything unusual is not memoised and patched for real each time: a resource whose patching met a
 * conflict (a key already taken), TCP routers (their servers depend on service bodies), and a
 * replay whose keys are taken by then.
 */
import { stringifyCanonical } from '../lossless-json.ts';
import type { DanglingReference, Emitter, Recording, ResourceOutcome } from './generate-support.ts';
import { findSection, section, withoutProvider } from './generate-support.ts';
import type { GenerationInput } from './generate.ts';
import type { Resource } from '../types.ts';
import type { DeepReadonly } from '../readonly.ts';

/** Where a resource's patch started: compared by identity / text when the resource comes again. */
export interface PatchKey {
  readonly base: unknown;
  readonly references: string;
}

/** What patching one resource produced, as the generator observed it (generate.ts patchRecorded). */
export interface PatchResult {
  readonly recording: Recording;
  readonly dangling: readonly DanglingReference[];
  readonly mtlsUsed: boolean;
  readonly outcome: ResourceOutcome;
  /** no conflict arose while patching: a replay would not repeat it */
  readonly clean: boolean;
}

/** A remembered patch: read-only, since replays hand the same objects out again. */
type Entry = Readonly<
  PatchKey & Omit<PatchResult, 'clean' | 'recording'> & { resource: Resource; recording: DeepReadonly<Recording> }
>;

export interface MemoStats {
  replayed: number;
  patched: number;
}

/** Kept by the caller across generations (the provider holds one). */
export class PatchMemo {
  private environment = '';
  private previous = new Map<string, Entry>();
  private current = new Map<string, Entry>();
  stats: MemoStats = { replayed: 0, patched: 0 };

  /** Starts a generation: a changed environment forgets every entry. */
  begin(input: GenerationInput): void {
    const environment = environmentOf(input);
    if (environment !== this.environment) {
      this.environment = environment;
      this.previous = new Map();
    }
    this.current = new Map();
    this.stats = { replayed: 0, patched: 0 };
  }

  /** Ends a generation: entries of resources not seen in it are dropped. */
  end(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  /** Replays the previous patch of `resource` when its key still holds; null when it must be patched. */
  replay(emitter: Emitter, resource: Resource): ResourceOutcome | null {
    const entry = this.previous.get(resource.id);
    if (!entry || entry.resource !== resource || entry.base !== baseOf(emitter, resource)) return null;
    if (entry.references !== referencesOf(emitter, resource)) return null;
    const { puts, replaced } = entry.recording;
    for (const put of puts) {
      const target = findSection(emitter.config, put.path[0], put.path[1]);
      if (target && Object.hasOwn(target, put.key)) return null;
    }
    if (replaced) section(emitter.config, 'http', 'routers')[replaced.key] = replaced.router;
    for (const put of puts) section(emitter.config, put.path[0], put.path[1])[put.key] = put.value;
    for (const d of entry.dangling) emitter.dangling.push(d);
    if (entry.mtlsUsed) emitter.mtlsUsed = true;
    this.current.set(resource.id, entry);
    this.stats.replayed += 1;
    return entry.outcome;
  }

  /** The key of a patch about to be made (taken before patching: the patch replaces the base router). */
  keyOf(emitter: Emitter, resource: Resource): PatchKey {
    return { base: baseOf(emitter, resource), references: referencesOf(emitter, resource) };
  }

  /** Remembers a patch the generator made, when it can be replayed. Reads its arguments only. */
  remember(resource: Resource, key: PatchKey, result: PatchResult): void {
    this.stats.patched += 1;
    if (!result.recording.cacheable || !result.clean) return;
    const { clean: _clean, ...patch } = result;
    this.current.set(resource.id, { resource, ...key, ...patch });
  }
}

/** The object a resource's patch starts from: its upstream router (Pangolin) or runtime router (Traefik). */
function baseOf(emitter: Emitter, resource: Resource): unknown {
  if (emitter.mode === 'traefik') return emitter.traefikRouters.get(resource.router);
  const routers = findSection(emitter.config, 'http', 'routers');
  const key = withoutProvider(resource.router || resource.name);
  return routers && Object.hasOwn(routers, key) ? routers[key] : undefined;
}

/**
 * What the resource's references resolve to: for each assigned middleware whether it exists, for
 * its service id what resolveService would find (ours and its protocol, or the discovered service
 * and, in Pangolin mode, whether its upstream key is defined). Cheap: a few lookups per resource.
 */
function referencesOf(emitter: Emitter, resource: Resource): string {
  let out = '';
  for (const a of resource.middlewares ?? []) out += emitter.middlewares.has(a.id) ? '1' : '0';
  const id = resource.service_id;
  if (id === null || id === undefined) return out;
  const ours = emitter.services.get(id);
  if (ours) return `${out}\0o${ours.protocol ?? 'http'}`;
  const found = emitter.discovered.get(id);
  if (!found) return `${out}\0-`;
  const protocol = found.protocol ?? 'http';
  const services = emitter.mode === 'pangolin' ? findSection(emitter.config, protocol, 'services') : undefined;
  const defined = services !== undefined && Object.hasOwn(services, withoutProvider(found.upstream_name));
  return `${out}\0d${protocol}\0${found.upstream_name}\0${defined ? 1 : 0}`;
}

/** The mode and mTLS state: every patch reads them. */
function environmentOf(input: GenerationInput): string {
  return `${input.mode}\0${stringifyCanonical(input.mtls)}`;
}
