/**
 * Entry points for raw TCP/UDP resources (API.md §4.20): the static config's `entryPoints`, the ones
 * the served document's routers use, and the ports the compose file's `gerbil` service publishes
 * (Traefik runs in Gerbil's network namespace, so a port Traefik listens on must be published there).
 */
import { isMap, isScalar, isSeq, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import { DotEnvError, NO_VARIABLES, readComposeVariables, type ComposeVariables } from './compose-env.ts';
import { staticErrors } from './errors.ts';
import { publishesPort, unreadableItemsFor } from './gerbil-ports.ts';
import { ensureMap, lineOf, loadYamlFile, mapAt, rootOf, saveYamlFiles, type YamlFile } from './yaml-file.ts';

export type Protocol = 'tcp' | 'udp';

export interface EntryPointView {
  name: string;
  /** the static config's `address`; null when not in the static config (or no address) */
  address: string | null;
  protocol: Protocol;
  port: number | null;
  in_static_config: boolean;
  /** null when no compose file is configured (unknown) */
  published_on_gerbil: boolean | null;
  /**
   * when `published_on_gerbil` is false: each `services.gerbil.ports` item that could not be read
   * and could publish this port, with why (its variable without a value, the `.env` file and line
   * that cannot be used, …); [] otherwise
   */
  published_on_gerbil_warnings: string[];
  /** ids of resources whose routers use the entry point */
  used_by: string[];
  /** names of the served document's routers that use it (raw TCP/UDP routers often have no resource) */
  routers: string[];
}

export interface SyncResult {
  dry_run: boolean;
  added: string[];
  published: string[];
  /** missing entry points that were not added, with why */
  skipped: Array<{ name: string; reason: string }>;
  compose_file: string | null;
  restart_required: string[];
}

export interface StaticServiceOptions {
  staticPath: () => string | null;
  composePath: () => string | null;
  /** the served document (`generation.served`), null when none was generated */
  served: () => Record<string, unknown> | null;
  /** resource ids with their router names (`router` full key, and the id the generator names routers by) */
  resources: () => Array<{ id: string; router: string }>;
}

const STATIC_LABEL = 'Traefik static config';
const COMPOSE_LABEL = 'compose file';
const GERBIL = 'gerbil';
const CONVENTIONAL = /^(tcp|udp)-([0-9]{1,5})$/;

/** `[host]:port[/tcp|/udp]` → port and protocol (null when it is not that form). */
export function parseAddress(address: string): { port: number; protocol: Protocol } | null {
  const match = /:([0-9]{1,5})(?:\/(tcp|udp))?$/i.exec(address);
  if (!match) return null;
  const port = Number(match[1]);
  if (port < 1 || port > 65535) return null;
  return { port, protocol: (match[2]?.toLowerCase() as Protocol | undefined) ?? 'tcp' };
}

/** The port and protocol a `tcp-<port>`/`udp-<port>` name stands for; null for other names. */
export function conventional(name: string): { port: number; protocol: Protocol } | null {
  const match = CONVENTIONAL.exec(name);
  if (!match) return null;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { port, protocol: match[1] as Protocol } : null;
}

const addressFor = (port: number, protocol: Protocol) => (protocol === 'udp' ? `:${port}/udp` : `:${port}`);
/** `{address: "<address>"}`, quoted like Traefik's documentation writes addresses. */
function addressNode(address: string): YAMLMap {
  const map = new YAMLMap();
  const value = new Scalar(address);
  value.type = Scalar.QUOTE_DOUBLE;
  map.set('address', value);
  return map;
}

const mappingFor = (port: number, protocol: Protocol) =>
  protocol === 'udp' ? `${port}:${port}/udp` : `${port}:${port}`;

interface StaticEntry {
  name: string;
  address: string | null;
  port: number | null;
  protocol: Protocol;
}

interface RouterUse {
  routers: string[];
  protocol: Protocol;
}

/**
 * The `.env` variables beside the compose file; none when there is no compose file or `.env` cannot
 * be used, then with its DotEnvError (the list names it, apply refuses with it).
 */
async function composeVariables(
  compose: YamlFile | null,
): Promise<{ vars: ComposeVariables; envError: DotEnvError | null }> {
  if (!compose) return { vars: NO_VARIABLES, envError: null };
  try {
    return { vars: await readComposeVariables(compose.file), envError: null };
  } catch (err) {
    if (err instanceof DotEnvError) return { vars: NO_VARIABLES, envError: err };
    throw err;
  }
}

/** Why each item that could publish `port` did not (published_on_gerbil_warnings). */
function unpublishedWarnings(
  items: unknown[],
  vars: ComposeVariables,
  envError: DotEnvError | null,
  port: number,
  protocol: Protocol,
): string[] {
  return unreadableItemsFor(items, vars, port, protocol).map(({ index, item, message, usesVariables }) => {
    const shown = `services.${GERBIL}.ports[${index}] ${JSON.stringify(item)}`;
    if (envError && usesVariables) {
      const at = envError.line === null ? envError.file : `${envError.file}:${envError.line}`;
      return `${shown} uses variables, and the .env file ${at} cannot be used: ${envError.message}`;
    }
    return `${shown} cannot be read: ${message}`;
  });
}

export class StaticService {
  /** edits run one at a time: two syncs at once would both read the old files */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: StaticServiceOptions) {}

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private staticFile(): string {
    const file = this.options.staticPath();
    if (!file) throw staticErrors.noStaticPath();
    return file;
  }

  private loadStatic(): Promise<YamlFile> {
    return loadYamlFile(STATIC_LABEL, this.staticFile(), false);
  }

  private async loadCompose(): Promise<YamlFile | null> {
    const file = this.options.composePath();
    return file ? loadYamlFile(COMPOSE_LABEL, file, true) : null;
  }

  /** The static config's entry points, in file order. */
  private staticEntries(loaded: YamlFile): StaticEntry[] {
    const top = rootOf(loaded, false);
    const map = top ? mapAt(loaded, top, 'entryPoints', 'entryPoints') : null;
    const entries: StaticEntry[] = [];
    for (const pair of map?.items ?? []) {
      const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const value = pair.value;
      const raw = isMap(value) ? value.get('address') : undefined;
      const address = typeof raw === 'string' ? raw : null;
      const parsed = address ? parseAddress(address) : null;
      entries.push({ name, address, port: parsed?.port ?? null, protocol: parsed?.protocol ?? 'tcp' });
    }
    return entries;
  }

  /** Entry point name → the served document's routers using it (explicit `entryPoints` only). */
  private routerUses(): Map<string, RouterUse> {
    const uses = new Map<string, RouterUse>();
    const served = this.options.served();
    if (!served) return uses;
    for (const section of ['http', 'tcp', 'udp'] as const) {
      const routers = (served[section] as { routers?: Record<string, unknown> } | undefined)?.routers;
      if (!routers || typeof routers !== 'object') continue;
      for (const [name, router] of Object.entries(routers)) {
        const entryPoints = (router as { entryPoints?: unknown } | null)?.entryPoints;
        if (!Array.isArray(entryPoints)) continue;
        for (const entryPoint of entryPoints) {
          if (typeof entryPoint !== 'string') continue;
          const use = uses.get(entryPoint) ?? { routers: [], protocol: section === 'udp' ? 'udp' : 'tcp' };
          use.routers.push(name);
          uses.set(entryPoint, use);
        }
      }
    }
    return uses;
  }

  /** Router name → resource ids (a resource's upstream router without its provider, its id, `<id>_tcp`). */
  private resourceIndex(): Map<string, string[]> {
    const index = new Map<string, string[]>();
    const add = (router: string, id: string) => {
      const ids = index.get(router) ?? [];
      if (!ids.includes(id)) ids.push(id);
      index.set(router, ids);
    };
    for (const resource of this.options.resources()) {
      const at = resource.router.lastIndexOf('@');
      if (resource.router) add(at < 0 ? resource.router : resource.router.slice(0, at), resource.id);
      add(resource.id, resource.id);
      add(`${resource.id}_tcp`, resource.id);
    }
    return index;
  }

  /** The `ports:` of services.gerbil (null when absent); no gerbil service → 409. */
  private gerbilPorts(compose: YamlFile, create: boolean): YAMLSeq | null {
    const top = rootOf(compose, false);
    const services = top ? mapAt(compose, top, 'services', 'services') : null;
    const gerbil = services ? mapAt(compose, services, GERBIL, `services.${GERBIL}`) : null;
    if (!gerbil) throw staticErrors.noGerbil(compose.file);
    const node = gerbil.get('ports', true);
    if (isSeq(node)) return node as YAMLSeq;
    if (node !== undefined && !(isScalar(node) && (node.value === null || node.value === undefined)))
      throw staticErrors.fileUnusable(
        COMPOSE_LABEL,
        compose.file,
        lineOf(compose, node),
        `services.${GERBIL}.ports is not a list`,
      );
    if (!create) return null;
    const seq = new YAMLSeq();
    gerbil.set('ports', seq);
    return seq;
  }

  private static published(ports: YAMLSeq | null, vars: ComposeVariables, port: number, protocol: Protocol): boolean {
    return publishesPort((ports?.toJSON() as unknown[] | undefined) ?? [], vars, port, protocol);
  }

  /** The static config's entry point names, in file order (the apply job waits until Traefik lists them). */
  async entryPointNames(): Promise<string[]> {
    return this.staticEntries(await this.loadStatic()).map((entry) => entry.name);
  }

  /** `services.gerbil.ports` as plain values (the apply job publishes them); 503 without a compose file. */
  async gerbilPortItems(): Promise<{ file: string; items: unknown[] }> {
    const compose = await this.loadCompose();
    if (!compose) throw staticErrors.noComposeFile();
    const ports = this.gerbilPorts(compose, false);
    return { file: compose.file, items: (ports?.toJSON() as unknown[] | undefined) ?? [] };
  }

  /** GET: the static config's entry points, then every missing one routers use (by name). */
  async list(): Promise<EntryPointView[]> {
    const loaded = await this.loadStatic();
    const compose = await this.loadCompose();
    const ports = compose ? this.gerbilPorts(compose, false) : null;
    const items = (ports?.toJSON() as unknown[] | undefined) ?? [];
    const { vars, envError } = await composeVariables(compose);
    const uses = this.routerUses();
    const resources = this.resourceIndex();
    const view = (entry: StaticEntry, inStatic: boolean): EntryPointView => {
      const routers = uses.get(entry.name)?.routers ?? [];
      const ids = new Set(routers.flatMap((router) => resources.get(router) ?? []));
      const published =
        compose && entry.port !== null ? StaticService.published(ports, vars, entry.port, entry.protocol) : null;
      return {
        name: entry.name,
        address: entry.address,
        protocol: entry.protocol,
        port: entry.port,
        in_static_config: inStatic,
        published_on_gerbil: published,
        published_on_gerbil_warnings:
          published === false && entry.port !== null
            ? unpublishedWarnings(items, vars, envError, entry.port, entry.protocol)
            : [],
        used_by: [...ids].sort(),
        routers: [...routers].sort(),
      };
    };
    const entries = this.staticEntries(loaded);
    const known = new Set(entries.map((entry) => entry.name));
    const views = entries.map((entry) => view(entry, true));
    for (const [name, use] of [...uses].sort(([a], [b]) => a.localeCompare(b))) {
      if (known.has(name)) continue;
      const implied = conventional(name);
      views.push(
        view({ name, address: null, port: implied?.port ?? null, protocol: implied?.protocol ?? use.protocol }, false),
      );
    }
    return views;
  }

  /** PUT: adds the entry point or sets its address (its other settings and comments stay). */
  put(name: string, address: string): Promise<EntryPointView & { restart_required: string[] }> {
    return this.exclusive(async () => {
      const parsed = /^:[0-9]{1,5}(\/(tcp|udp))?$/.test(address) ? parseAddress(address) : null;
      if (!parsed) throw staticErrors.invalid('/address', 'must be ":<port>" or ":<port>/udp" with a port 1-65535');
      const loaded = await this.loadStatic();
      const other = this.staticEntries(loaded).find(
        (entry) => entry.name !== name && entry.port === parsed.port && entry.protocol === parsed.protocol,
      );
      if (other) throw staticErrors.portTaken(name, parsed.port, parsed.protocol, other.name);
      const entryPoints = ensureMap(loaded, rootOf(loaded, true)!, 'entryPoints', 'entryPoints');
      const existing = mapAt(loaded, entryPoints, name, `entryPoints.${name}`);
      if (existing) {
        const old = existing.get('address', true);
        const value = new Scalar(address);
        value.type = isScalar(old) && old.type !== Scalar.PLAIN ? old.type : Scalar.QUOTE_DOUBLE;
        existing.set('address', value);
      } else entryPoints.set(name, addressNode(address));
      await saveYamlFiles([loaded]);
      const view = (await this.list()).find((entry) => entry.name === name)!;
      return { ...view, restart_required: ['traefik'] };
    });
  }

  /** DELETE: removes the entry point unless routers of the served document use it. */
  remove(name: string): Promise<void> {
    return this.exclusive(async () => {
      const loaded = await this.loadStatic();
      const top = rootOf(loaded, false);
      const entryPoints = top ? mapAt(loaded, top, 'entryPoints', 'entryPoints') : null;
      if (!entryPoints?.has(name)) throw staticErrors.notFound(name);
      const routers = this.routerUses().get(name)?.routers ?? [];
      if (routers.length > 0) throw staticErrors.inUse(name, [...routers].sort());
      entryPoints.delete(name);
      await saveYamlFiles([loaded]);
    });
  }

  /**
   * POST sync: every `tcp-<port>`/`udp-<port>` routers use that the static config lacks is added
   * (`:<port>` or `:<port>/udp`), and every used one's port that Gerbil does not publish is added to
   * `services.gerbil.ports` (`"<port>:<port>"`, `"<port>:<port>/udp"`). Without a compose file only
   * the static config is edited (`compose_file: null`, `published: []`).
   */
  sync(dryRun: boolean): Promise<SyncResult> {
    return this.exclusive(async () => {
      const loaded = await this.loadStatic();
      const compose = await this.loadCompose();
      const ports = compose ? this.gerbilPorts(compose, false) : null;
      const items = (ports?.toJSON() as unknown[] | undefined) ?? [];
      const { vars, envError } = await composeVariables(compose);
      const entries = this.staticEntries(loaded);
      const byName = new Map(entries.map((entry) => [entry.name, entry]));
      const taken = new Map(entries.map((entry) => [`${entry.protocol}/${entry.port}`, entry.name]));
      const added: Array<{ name: string; port: number; protocol: Protocol }> = [];
      const publish: Array<{ port: number; protocol: Protocol }> = [];
      const skipped: SyncResult['skipped'] = [];
      for (const name of [...this.routerUses().keys()].sort()) {
        const implied = conventional(name);
        if (!implied) {
          if (!byName.has(name))
            skipped.push({ name, reason: 'not of the form tcp-<port>/udp-<port>: add it with PUT and an address' });
          continue;
        }
        const present = byName.get(name);
        if (!present) {
          const owner = taken.get(`${implied.protocol}/${implied.port}`);
          if (owner) {
            skipped.push({
              name,
              reason: `${implied.protocol} port ${implied.port} is the address of entry point ${owner}`,
            });
            continue;
          }
          taken.set(`${implied.protocol}/${implied.port}`, name);
          added.push({ name, ...implied });
        }
        const port = present?.port ?? implied.port;
        const protocol = present ? present.protocol : implied.protocol;
        if (compose && !StaticService.published(ports, vars, port, protocol)) {
          // an item that could publish it once readable: a second mapping would clash with it then
          const unreadable = unpublishedWarnings(items, vars, envError, port, protocol);
          if (unreadable.length > 0)
            skipped.push({
              name,
              reason: `port ${port}/${protocol} not published on ${GERBIL}: ${unreadable.join('; ')} — fix it, then sync again`,
            });
          else if (!publish.some((p) => p.port === port && p.protocol === protocol)) publish.push({ port, protocol });
        }
      }
      const result: SyncResult = {
        dry_run: dryRun,
        added: added.map((entry) => entry.name),
        published: publish.map((p) => mappingFor(p.port, p.protocol)),
        skipped,
        compose_file: compose?.file ?? null,
        restart_required: [...(added.length > 0 ? ['traefik'] : []), ...(publish.length > 0 ? ['gerbil'] : [])],
      };
      if (dryRun || (added.length === 0 && publish.length === 0)) return result;
      const files: YamlFile[] = [];
      if (added.length > 0) {
        const entryPoints = ensureMap(loaded, rootOf(loaded, true)!, 'entryPoints', 'entryPoints');
        for (const entry of added) entryPoints.set(entry.name, addressNode(addressFor(entry.port, entry.protocol)));
        files.push(loaded);
      }
      if (compose && publish.length > 0) {
        const seq = this.gerbilPorts(compose, true)!;
        const style = seq.items.find((item): item is Scalar => isScalar(item))?.type ?? Scalar.QUOTE_DOUBLE;
        for (const p of publish) {
          const node = new Scalar(mappingFor(p.port, p.protocol));
          // a plain 2222:2222 reads as a base-60 number in YAML 1.1: never plain
          node.type = style === Scalar.PLAIN ? Scalar.QUOTE_DOUBLE : style;
          seq.items.push(node);
        }
        files.push(compose);
      }
      await saveYamlFiles(files);
      return result;
    });
  }
}
