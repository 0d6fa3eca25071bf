/**
 * The findings of API.md §4.19: why a resource does not answer as we emitted it, each with one
 * sentence an operator can act on. Pure: one instance's reading in, findings out. Ids are
 * `<kind>:<source>:<subject>` (subject `instance` for instance-wide findings) and stay the same while
 * the finding persists, so the checker can tell raised from cleared by id.
 */
import { newKeys, type ExpectedDocument } from './compare.ts';
import { compareVersions, parseVersion } from '../traefik-versions.ts';
import type { Finding, FindingKind, InstanceReading, TraefikObject } from './types.ts';

export interface FindingInput {
  reading: InstanceReading;
  document: 'current' | 'behind' | 'unknown';
  /** our latest document */
  latest: ExpectedDocument | null;
  /** the last document this instance was seen running (for document_behind's new keys) */
  taken: ExpectedDocument | null;
  /** resource id → Traefik router name (from resourceRouterName) */
  routerOf: ReadonlyMap<string, string>;
  /** false → version_unknown (when reachable) */
  versionKnown: boolean;
  /** `proxy.traefik_version` as set (null or absent: unset): document_behind names it when the instance runs another */
  versionSetting?: string | null;
  /**
   * The plugin keys of Traefik's static config (null or absent: unknown): Traefik downloads every
   * `remote` one (`experimental.plugins`) at start and, when one fails, disables every plugin —
   * `local` ones too — so plugins_disabled names the remote ones to vendor.
   */
  declaredPlugins?: DeclaredPluginKeys | null;
}

/** The keys of `experimental.plugins` (remote) and `experimental.localPlugins` (local). */
export interface DeclaredPluginKeys {
  remote: readonly string[];
  local: readonly string[];
}

/** Order of the findings of one instance (most fundamental first). */
const KIND_ORDER: readonly FindingKind[] = [
  'traefik_unreachable',
  'version_unknown',
  'document_behind',
  'plugins_disabled',
  'middleware_error',
  'router_disabled',
  'service_no_servers',
  'entrypoint_missing',
  'priority_tie',
  'keys_dropped',
];

/** How many names a message lists before "and N more". */
const LISTED = 20;

/** Traefik's texts for a plugin middleware it could not build (plugin not loaded or not downloaded). */
const UNKNOWN_PLUGIN = /unknown plugin type: ?([^\s"]+)/;
const PLUGIN_MISSING_TEXT = 'invalid middleware type or middleware does not exist';
const MISSING_ENTRY_POINT = /entryPoint "([^"]+)" doesn't exist/;
const NO_VALID_ENTRY_POINT = 'no valid entryPoint';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const listOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

const nameOf = (object: TraefikObject): string => (typeof object.name === 'string' ? object.name : '');

const isOurs = (name: string): boolean => name.endsWith('@http');

/** How a message names an instance: data sources are often named `traefik` ("Traefik traefik" reads badly). */
function instanceName(source: string, start = false): string {
  return `${start ? 'The' : 'the'} Traefik instance \`${source}\``;
}

/** `a, b, c and 4 more` */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, LISTED).join(', ');
  return names.length > LISTED ? `${shown} and ${names.length - LISTED} more` : shown;
}

/** Pangolin's `<router>-redirect` (HTTP → HTTPS) companion of a resource's router. */
const REDIRECT_COMPANION = /-redirect@http$/;

/** Resource ids concerned by a set of Traefik router names, through routerOf reversed. */
class ResourceIndex {
  /** built on the first finding that names resources (a healthy instance needs none) */
  private byRouter: Map<string, string[]> | null = null;
  constructor(private readonly routerOf: ReadonlyMap<string, string>) {}
  of(routers: Iterable<string>): string[] {
    if (!this.byRouter) {
      this.byRouter = new Map();
      for (const [id, name] of this.routerOf) {
        const ids = this.byRouter.get(name);
        if (ids) ids.push(id);
        else this.byRouter.set(name, [id]);
      }
    }
    const ids = new Set<string>();
    for (const router of routers) {
      // Pangolin's HTTP → HTTPS companion `<router>-redirect` belongs to its router's resource
      const found = this.byRouter.get(router) ?? this.byRouter.get(router.replace(REDIRECT_COMPANION, '@http'));
      for (const id of found ?? []) ids.add(id);
    }
    return [...ids].sort();
  }
}

function finding(
  kind: FindingKind,
  source: string,
  subject: string,
  severity: Finding['severity'],
  fields: { message: string; resources?: string[]; middlewares?: string[]; fix: string },
): Finding {
  return {
    id: `${kind}:${source}:${subject}`,
    severity,
    kind,
    message: fields.message,
    resources: fields.resources ?? [],
    middlewares: fields.middlewares ?? [],
    fix: fields.fix,
  };
}

/** A middleware Traefik could not build because its plugin is not loaded. */
function isPluginMiddleware(middleware: TraefikObject, errors: readonly string[]): boolean {
  return (
    isObject(middleware.plugin) ||
    errors.some((error) => UNKNOWN_PLUGIN.test(error) || error.includes(PLUGIN_MISSING_TEXT))
  );
}

/** The plugin keys (names under `experimental.plugins`) a plugin middleware uses. */
function pluginKeys(middleware: TraefikObject, errors: readonly string[]): string[] {
  if (isObject(middleware.plugin)) return Object.keys(middleware.plugin);
  for (const error of errors) {
    const match = UNKNOWN_PLUGIN.exec(error);
    if (match) return [match[1]];
  }
  return typeof middleware.type === 'string' && middleware.type !== '' ? [middleware.type] : [];
}

/**
 * The fix for a basicAuth/digestAuth whose `usersFile` Traefik cannot read (Traefik 3.7.15: `open
 * <path>: no such file or directory`, `read <path>: is a directory`) or holds a line it cannot
 * parse (`error parsing BasicUser: <line>`): the path is on Traefik's disk, which Stack Manager
 * cannot see, and Traefik reads the file only when it builds the middleware. Null otherwise.
 */
function usersFileFix(name: string, middleware: TraefikObject, errors: readonly string[]): string | null {
  const auth = isObject(middleware.basicAuth) ? middleware.basicAuth : middleware.digestAuth;
  const file = isObject(auth) && typeof auth.usersFile === 'string' ? auth.usersFile : '';
  if (file === '') return null;
  const where = isOurs(name)
    ? `usersFile of middleware ${name.slice(0, -'@http'.length)} in Stack Manager`
    : `usersFile of middleware ${name} in its provider (${name.slice(name.lastIndexOf('@') + 1)})`;
  const reload =
    'Traefik reads the file when it builds the middleware: after fixing the file, any change of the dynamic configuration (or a Traefik restart) loads it.';
  if (errors.some((error) => error.startsWith(`open ${file}: `) || error.startsWith(`read ${file}: `)))
    return `${file} is a path on the Traefik instance's disk, which Stack Manager cannot see: create that file there, readable by Traefik, one user per line, or correct ${where}. ${reload}`;
  const line = errors.map((error) => /^error parsing (?:Basic|Digest)User: (.*)$/.exec(error)?.[1]).find(Boolean);
  const inline = listOf(isObject(auth) ? auth.users : undefined);
  if (line !== undefined && !inline.includes(line))
    return `A line of ${file} on the Traefik instance's disk is not a user Traefik can read (${middleware.basicAuth ? 'name:hashed-password' : 'name:realm:encoded-password'}): correct it there. ${reload}`;
  return null;
}

/** Literal hosts of a rule's `Host(...)` matchers, lower-cased (negated ones and HostRegexp/HostSNI excluded). */
export function ruleHosts(rule: string): string[] {
  const hosts: string[] = [];
  // a scan rather than a regular expression: this runs for every router of every reading
  for (let at = rule.indexOf('Host('); at >= 0; at = rule.indexOf('Host(', at + 5)) {
    const before = at > 0 ? rule[at - 1] : ' ';
    const end = rule.indexOf(')', at);
    if (end < 0) break;
    if (before === '!' || /\w/.test(before)) continue;
    for (let i = at + 5; i < end; i++) {
      const quote = rule[i];
      if (quote !== '`' && quote !== '"') continue;
      const close = rule.indexOf(quote, i + 1);
      if (close < 0 || close > end) break;
      hosts.push(rule.slice(i + 1, close).toLowerCase());
      i = close;
    }
  }
  return hosts;
}

/** Findings of one instance's check; ids are `<kind>:<source>:<subject>` and stay stable while the finding persists. */
export function instanceFindings(input: FindingInput): Finding[] {
  const { reading, routerOf } = input;
  const source = reading.source;
  const resources = new ResourceIndex(routerOf);
  if (!reading.reachable) {
    return [
      finding('traefik_unreachable', source, 'instance', 'error', {
        message: `${instanceName(source, true)} could not be read: ${reading.error ?? 'no answer'}; the live state of every resource is unknown.`,
        resources: [...routerOf.keys()].sort(),
        fix: `Check that Traefik runs and that its API answers at the URL of data source ${source} (api.insecure or a router to api@internal, reachable from Stack Manager).`,
      }),
    ];
  }
  const findings: Finding[] = [];
  if (!input.versionKnown) {
    findings.push(
      finding('version_unknown', source, 'instance', 'warning', {
        message: `${instanceName(source, true)} did not report its version${reading.version_error ? ` (${reading.version_error})` : ''}, so the version gate drops only keys no Traefik version reads.`,
        fix: `Set proxy.traefik_version to the version Traefik runs (or let Stack Manager read ${source}'s /api/version${reading.version_error ? ': a router to api@internal must let it through, not only the lists' : ''}).`,
      }),
    );
  }
  if (input.document === 'behind') findings.push(documentBehind(input, resources));
  findings.push(...traefikObjectFindings(reading, resources, input.declaredPlugins ?? null));
  return findings.sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || (a.id < b.id ? -1 : 1));
}

function documentBehind(input: FindingInput, resources: ResourceIndex): Finding {
  const { source } = input.reading;
  const { latest, taken } = input;
  let message: string;
  let routers: string[];
  if (taken && latest) {
    const keys = newKeys(taken.config, latest.config, LISTED);
    message =
      `${instanceName(source, true)} has not taken our latest document (${latest.etag}); it still runs ${taken.etag}. ` +
      (keys.length > 0
        ? `Keys new since the last document it took: ${keys.join(', ')}.`
        : 'No key is new since the last document it took (it may refuse a value).');
    // the resources whose routers changed since then are the ones not running as emitted
    routers = [];
    for (const [name, router] of latest.routers) {
      if (taken.routers.get(name)?.digest !== router.digest) routers.push(name);
    }
  } else {
    message = `${instanceName(source, true)} runs none of our documents${latest ? ` (latest ${latest.etag})` : ''}.`;
    routers = latest ? [...latest.routers.keys()] : [];
  }
  return finding('document_behind', source, 'instance', 'error', {
    message,
    resources: resources.of(routers),
    fix: documentBehindFix(input),
  });
}

/**
 * The fix of document_behind. A proxy.traefik_version naming another version than the instance
 * reports comes first: older than what is set, the gate keeps keys this Traefik cannot decode.
 */
function documentBehindFix(input: FindingInput): string {
  const setting = input.versionSetting || null;
  const running = input.reading.version;
  const log = "Traefik's log for the HTTP provider's error";
  // a wrong or missing provider token is the usual first-setup cause; Traefik 3.7.15 logs it as
  // "cannot fetch configuration data: received non-ok response code: 401"
  const poll =
    "that Traefik polls this server's provider endpoint with the provider token (its log says `received non-ok response code: 401` when providers.http.headers lacks `Authorization: Bearer <PROVIDER_TOKEN>`)";
  if (setting === null) {
    return `Check ${log} (a key its version cannot decode: set proxy.traefik_version so the version gate drops it), and ${poll}.`;
  }
  const set = parseVersion(setting);
  const runs = parseVersion(running);
  if (running === null || (set !== null && runs !== null ? compareVersions(set, runs) === 0 : setting === running)) {
    return `Check ${log} (proxy.traefik_version is ${setting}: a key the version gate does not know, or a value Traefik refuses), and ${poll}.`;
  }
  if (set !== null && runs !== null && compareVersions(runs, set) > 0) {
    return `proxy.traefik_version is ${setting} but this instance runs ${running} (the version gate drops more than needed, which is not why a document is refused): check ${log}, and ${poll}.`;
  }
  return `proxy.traefik_version is ${setting} but this instance runs ${running}: set it to ${running} (the oldest version of the Traefik instances polling this server), or clear it so the version gate reads Traefik's /api/version, and the keys ${running} cannot decode are dropped; if that is not it, check ${log}, and ${poll}.`;
}

/**
 * Which plugins to vendor. Traefik names only the middlewares it could not build; when one of them
 * is a local plugin and the static config has remote ones, Traefik most likely could not download
 * one of those at start and disabled every plugin (its log: "Plugins are disabled because an error
 * has occurred"): the remote ones are what to vendor, not the local one Traefik names.
 */
function pluginsToVendor(
  keys: readonly string[],
  declared: DeclaredPluginKeys | null,
): { toVendor: string[]; cause: string } {
  if (!declared || declared.remote.length === 0) return { toVendor: [...keys], cause: '' };
  const local = new Set(declared.local);
  const remote = [...declared.remote].sort();
  if (!keys.some((key) => local.has(key))) return { toVendor: [...keys], cause: '' };
  return {
    toVendor: remote,
    cause: ` Traefik disables every plugin, local ones included, when it cannot set one up at start — most often a failed download of experimental.plugins (${listed(remote)}); its log says which ("Plugins are disabled because an error has occurred").`,
  };
}

/** Everything found in Traefik's own lists: middlewares, routers, services, entry points, priorities. */
function traefikObjectFindings(
  reading: InstanceReading,
  resources: ResourceIndex,
  declared: DeclaredPluginKeys | null,
): Finding[] {
  const source = reading.source;
  const findings: Finding[] = [];
  const allRouters = [reading.http.routers, reading.tcp.routers, reading.udp.routers];

  // middlewares in error (usually none: then the usage map below is never built)
  const failing = new Map<string, TraefikObject>();
  for (const list of [reading.http.middlewares, reading.tcp.middlewares]) {
    for (const middleware of list) {
      if (middleware.status === 'disabled' || (Array.isArray(middleware.error) && middleware.error.length > 0))
        failing.set(nameOf(middleware), middleware);
    }
  }
  // failing middleware → routers using it (Traefik's usedBy, and the routers' own lists: either may be absent)
  const usedBy = new Map<string, Set<string>>();
  const use = (middleware: string, router: string) => {
    const set = usedBy.get(middleware);
    if (set) set.add(router);
    else usedBy.set(middleware, new Set([router]));
  };
  if (failing.size > 0) {
    for (const router of [...reading.http.routers, ...reading.tcp.routers]) {
      for (const middleware of listOf(router.middlewares)) if (failing.has(middleware)) use(middleware, nameOf(router));
    }
  }

  // middlewares in error: ours, and other providers' used by one of our routers
  const plugins: Array<{ name: string; keys: string[] }> = [];
  const reported = new Set<string>();
  for (const [name, middleware] of failing) {
    for (const router of listOf(middleware.usedBy)) use(name, router);
    const errors = listOf(middleware.error);
    const users = [...(usedBy.get(name) ?? [])];
    if (!isOurs(name) && !users.some(isOurs)) continue;
    reported.add(name);
    if (isPluginMiddleware(middleware, errors)) {
      plugins.push({ name, keys: pluginKeys(middleware, errors) });
      continue;
    }
    findings.push(
      finding('middleware_error', source, name, 'error', {
        message: `${instanceName(source, true)} cannot build middleware ${name}: ${errors.join('; ') || `status ${String(middleware.status)}`}.`,
        resources: resources.of(users),
        middlewares: [name],
        fix:
          usersFileFix(name, middleware, errors) ??
          (isOurs(name)
            ? `Correct middleware ${name.slice(0, -'@http'.length)}'s configuration in Stack Manager as Traefik's error says.`
            : `Correct middleware ${name} in its provider (${name.slice(name.lastIndexOf('@') + 1)}) as Traefik's error says.`),
      }),
    );
  }
  const pluginNames = new Set(plugins.flatMap((plugin) => plugin.keys));
  if (plugins.length > 0) {
    const keys = [...pluginNames].sort();
    const names = plugins.map((plugin) => plugin.name).sort();
    const { toVendor, cause } = pluginsToVendor(keys, declared);
    findings.push(
      finding('plugins_disabled', source, 'instance', 'error', {
        message: `${instanceName(source, true)} has not loaded plugin${keys.length === 1 ? '' : 's'} ${listed(keys)}: middleware${names.length === 1 ? '' : 's'} ${listed(names)} cannot be built and every router using ${names.length === 1 ? 'it' : 'them'} is disabled (404).${cause}`,
        resources: resources.of(names.flatMap((name) => [...(usedBy.get(name) ?? [])])),
        middlewares: names,
        fix: `Vendor the plugin${toVendor.length === 1 ? '' : 's'} (${toVendor.map((key) => `POST /api/plugins/${key}/vendor`).join(', ') || 'POST /api/plugins/<key>/vendor'}, API.md §4.20) so Traefik loads ${toVendor.length === 1 ? 'it' : 'them'} from plugins-local without downloading, then restart Traefik.`,
      }),
    );
  }

  // entry points our routers use that the instance does not have
  const entryPoints = new Set(reading.entrypoints);
  const missingEntryPoints = new Map<string, string[]>();
  // one pass over every router: missing entry points now, disabled routers once those are known
  const disabled: TraefikObject[] = [];
  for (const list of allRouters) {
    for (const router of list) {
      const name = nameOf(router);
      if (!isOurs(name)) continue;
      if (router.status === 'disabled') disabled.push(router);
      if (!Array.isArray(router.entryPoints)) continue;
      for (const entryPoint of router.entryPoints as unknown[]) {
        if (typeof entryPoint !== 'string') continue;
        if (entryPoints.has(entryPoint)) continue;
        const routers = missingEntryPoints.get(entryPoint);
        if (routers) routers.push(name);
        else missingEntryPoints.set(entryPoint, [name]);
      }
    }
  }
  for (const [entryPoint, routers] of missingEntryPoints) {
    findings.push(
      finding('entrypoint_missing', source, entryPoint, 'error', {
        message: `${instanceName(source, true)} has no entry point ${entryPoint}, used by ${listed(routers)}.`,
        resources: resources.of(routers),
        fix: `Add entry point ${entryPoint} to Traefik's static configuration and publish its port (POST /api/static/entrypoints/sync, API.md §4.20), then apply it (POST /api/static/apply).`,
      }),
    );
  }

  // disabled routers whose errors the findings above do not already explain
  for (const router of disabled) {
    const name = nameOf(router);
    const errors = listOf(router.error);
    const own = listOf(router.middlewares).filter((middleware) => reported.has(middleware));
    const explained = (error: string): boolean => {
      if (own.some((middleware) => error.includes(middleware))) return true;
      // Traefik 3.7.15 gives the router its middleware's build error as is, without the name
      if (own.some((middleware) => listOf(failing.get(middleware)?.error).includes(error))) return true;
      const plugin = UNKNOWN_PLUGIN.exec(error);
      if (plugin) return pluginNames.has(plugin[1]);
      if (error.includes(PLUGIN_MISSING_TEXT)) return plugins.length > 0;
      const entryPoint = MISSING_ENTRY_POINT.exec(error);
      if (entryPoint) return missingEntryPoints.has(entryPoint[1]);
      if (error.includes(NO_VALID_ENTRY_POINT)) return listOf(router.entryPoints).some((ep) => !entryPoints.has(ep));
      return false;
    };
    if (errors.length > 0 && errors.every(explained)) continue;
    findings.push(
      finding('router_disabled', source, name, 'error', {
        message: `${instanceName(source, true)} disabled router ${name}: ${errors.join('; ') || 'no error given'}.`,
        resources: resources.of([name]),
        middlewares: listOf(router.middlewares).filter((middleware) => errors.some((e) => e.includes(middleware))),
        fix: `Correct what Traefik's error names (the rule, a middleware or the service of ${name}); Stack Manager serves the router again on the next generation.`,
      }),
    );
  }

  findings.push(...serviceFindings(reading, resources));
  findings.push(...priorityTies(reading, resources));
  return findings;
}

/** True when a service's serverStatus has servers and all of them are DOWN. */
function allDown(serverStatus: unknown): boolean {
  if (!isObject(serverStatus)) return false;
  let any = false;
  for (const key in serverStatus) {
    if (serverStatus[key] !== 'DOWN') return false;
    any = true;
  }
  return any;
}

/** Our services used by a router that have no server, or whose servers are all DOWN (Traefik answers 503). */
function serviceFindings(reading: InstanceReading, resources: ResourceIndex): Finding[] {
  const findings: Finding[] = [];
  const lists: Array<[string, readonly TraefikObject[]]> = [
    ['', reading.http.services],
    ['tcp/', reading.tcp.services],
    ['udp/', reading.udp.services],
  ];
  for (const [prefix, services] of lists) {
    for (const service of services) {
      const name = nameOf(service);
      const loadBalancer = service.loadBalancer;
      if (!isOurs(name) || !isObject(loadBalancer) || !Array.isArray(service.usedBy) || service.usedBy.length === 0)
        continue;
      const servers = Array.isArray(loadBalancer.servers) ? loadBalancer.servers.length : 0;
      if (servers > 0 && !allDown(service.serverStatus)) continue;
      const users = listOf(service.usedBy);
      findings.push(
        finding('service_no_servers', reading.source, prefix + name, 'error', {
          message:
            servers === 0
              ? `Service ${name} has no server in ${instanceName(reading.source)}: its routers (${listed(users)}) answer 503.`
              : `Every server of service ${name} is DOWN in ${instanceName(reading.source)} (${listed(Object.keys(service.serverStatus as object))}): its routers answer 503.`,
          resources: resources.of(users),
          fix:
            servers === 0
              ? `Give service ${name} at least one server (in Pangolin, a target for the resource) and check that the site's tunnel is up.`
              : `Check that the backend of ${name} is up and reachable from Traefik, and that its health check path and port are right.`,
        }),
      );
    }
  }
  return findings;
}

/** A router's effective priority as Traefik reports it ('' when it reports none). */
function effectivePriority(router: TraefikObject): string {
  if (typeof router.priorityStr === 'string') return router.priorityStr;
  return router.priority === undefined || router.priority === null ? '' : String(router.priority);
}

/** The entry points a router listens on (Traefik's `using`, else its `entryPoints`). */
function entryPointsOf(router: TraefikObject): string[] {
  const using = listOf(router.using);
  return using.length > 0 ? using : listOf(router.entryPoints);
}

/**
 * Enabled routers (any provider, at least one ours) on a shared entry point with equal effective
 * priority and a common Host: Traefik picks one of them arbitrarily. Grouped in one pass by
 * entry point + priority + host; one finding per set of routers.
 */
function priorityTies(reading: InstanceReading, resources: ResourceIndex): Finding[] {
  // first by host alone (no key string to build per router); most hosts have one router per entry point
  const byHost = new Map<string, TraefikObject[]>();
  for (const router of reading.http.routers) {
    if (router.status === 'disabled' || typeof router.rule !== 'string') continue;
    const hosts = ruleHosts(router.rule);
    for (let i = 0; i < hosts.length; i++) {
      if (hosts.indexOf(hosts[i]) !== i) continue;
      const routers = byHost.get(hosts[i]);
      if (routers) routers.push(router);
      else byHost.set(hosts[i], [router]);
    }
  }
  // then, among the routers sharing a host, by entry point and effective priority: pairwise in the
  // usual small sets (no key built unless two routers tie), by key in large ones (O(n) overall)
  const slots = new Map<string, Set<string>>();
  const tie = (entryPoint: string, priority: string, host: string, names: string[]) => {
    const key = `${entryPoint}\u0000${priority}\u0000${host}`;
    const set = slots.get(key) ?? new Set<string>();
    for (const name of names) set.add(name);
    slots.set(key, set);
  };
  for (const [host, routers] of byHost) {
    if (routers.length < 2 || !routers.some((router) => isOurs(nameOf(router)))) continue;
    const items = routers
      .map((router) => ({
        name: nameOf(router),
        priority: effectivePriority(router),
        entryPoints: entryPointsOf(router),
      }))
      .filter((item) => item.priority !== '');
    if (items.length <= 16) {
      for (let i = 0; i < items.length; i++) {
        for (let j = i + 1; j < items.length; j++) {
          if (items[i].priority !== items[j].priority) continue;
          for (const entryPoint of items[i].entryPoints)
            if (items[j].entryPoints.includes(entryPoint))
              tie(entryPoint, items[i].priority, host, [items[i].name, items[j].name]);
        }
      }
      continue;
    }
    const local = new Map<string, string[]>();
    for (const item of items) {
      for (const entryPoint of new Set(item.entryPoints)) {
        const key = `${entryPoint}\u0000${item.priority}`;
        const names = local.get(key);
        if (names) names.push(item.name);
        else local.set(key, [item.name]);
      }
    }
    for (const [key, names] of local) {
      if (names.length < 2) continue;
      const [entryPoint, priority] = key.split('\u0000');
      tie(entryPoint, priority, host, names);
    }
  }
  // the same routers may tie on several hosts or entry points: one finding per set of routers
  const groups = new Map<
    string,
    { routers: string[]; entryPoints: Set<string>; hosts: Set<string>; priority: string }
  >();
  for (const [key, set] of slots) {
    const names = [...set];
    if (!names.some(isOurs)) continue;
    const [entryPoint, priority, host] = key.split('\u0000');
    const routers = [...names].sort();
    const id = routers.join(',');
    const group = groups.get(id) ?? { routers, entryPoints: new Set(), hosts: new Set(), priority };
    group.entryPoints.add(entryPoint);
    group.hosts.add(host);
    groups.set(id, group);
  }
  return [...groups].map(([id, group]) =>
    finding('priority_tie', reading.source, id, 'warning', {
      message: `Routers ${listed(group.routers)} in ${instanceName(reading.source)} all match Host ${listed([...group.hosts].sort())} on entry point ${[...group.entryPoints].sort().join(', ')} with priority ${group.priority}: Traefik picks one of them arbitrarily.`,
      resources: resources.of(group.routers),
      fix: 'Give the router that should win a higher priority (the resource\u2019s priority setting), or make their Host rules distinct.',
    }),
  );
}

/** JSON Pointer segments (`~1` → `/`, `~0` → `~`). */
const pointer = (path: string): string[] =>
  path
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));

/**
 * keys_dropped findings from the version gate's dropped keys (Status dropped_keys: {path, key, min_version|null}).
 * One finding per key and min_version (a key dropped from 300 services is one finding listing the
 * first paths). Resources: those whose router held the key, and, with `doc`, those whose router
 * uses the service or middleware that held it.
 */
export function droppedKeyFindings(
  dropped: ReadonlyArray<{ path: string; key: string; min_version: string | null }>,
  routerOf: ReadonlyMap<string, string>,
  doc?: ExpectedDocument | null,
): Finding[] {
  const resources = new ResourceIndex(routerOf);
  const groups = new Map<string, { key: string; min: string | null; paths: string[]; routers: Set<string> }>();
  let users: Map<string, string[]> | null = null;
  const usersOf = (kind: string, name: string): string[] => {
    if (!doc) return [];
    users ??= referencesOf(doc);
    return users.get(`${kind}/${name}`) ?? [];
  };
  for (const entry of dropped) {
    const id = `${entry.key}:${entry.min_version ?? 'none'}`;
    let group = groups.get(id);
    if (!group) {
      group = { key: entry.key, min: entry.min_version, paths: [], routers: new Set() };
      groups.set(id, group);
    }
    group.paths.push(`${entry.path}/${entry.key}`);
    const [protocol, kind, name] = pointer(entry.path);
    if (protocol !== 'http' || name === undefined) continue;
    if (kind === 'routers') group.routers.add(`${name}@http`);
    else if (kind === 'services' || kind === 'middlewares') for (const r of usersOf(kind, name)) group.routers.add(r);
  }
  return [...groups].map(([id, group]) =>
    finding('keys_dropped', 'version-gate', id, 'warning', {
      message:
        group.min === null
          ? `No Traefik version reads key ${group.key}: it was left out of the served document at ${listed(group.paths)}.`
          : `Key ${group.key} needs Traefik ${group.min} or later: it was left out of the document served to older Traefik at ${listed(group.paths)}.`,
      resources: resources.of(group.routers),
      fix:
        group.min === null
          ? `Remove ${group.key} where it is set (it has no effect in any Traefik version), or leave it: it is dropped from every document.`
          : `Upgrade Traefik to ${group.min} or later (and update proxy.traefik_version if set), or remove ${group.key} where it is set.`,
    }),
  );
}

/** `services/<name>` and `middlewares/<name>` → our routers (full names) using them. */
function referencesOf(doc: ExpectedDocument): Map<string, string[]> {
  const references = new Map<string, string[]>();
  const add = (key: string, router: string) => {
    const list = references.get(key);
    if (list) list.push(router);
    else references.set(key, [router]);
  };
  const http = doc.config.http;
  const routers = isObject(http) && isObject(http.routers) ? http.routers : {};
  for (const [key, router] of Object.entries(routers)) {
    if (!isObject(router)) continue;
    if (typeof router.service === 'string' && !router.service.includes('@'))
      add(`services/${router.service}`, `${key}@http`);
    for (const middleware of listOf(router.middlewares)) {
      if (!middleware.includes('@') || middleware.endsWith('@http'))
        add(`middlewares/${middleware.replace(/@http$/, '')}`, `${key}@http`);
    }
  }
  return references;
}
