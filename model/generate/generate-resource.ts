/**
 * Per-resource router patching (API.md §4.9 G5–G8): base router, middleware chain, service,
 * priority, entry points, TLS and mTLS. TCP routers (G9) live in generate-tcp.ts.
 */
import {
  defaultResourceConfig,
  type JsonObject,
  type Resource,
  type ResourceConfig,
  type ResourceTls,
} from '../types.ts';
import {
  cloneJson,
  compare,
  findSection,
  hasKeys,
  putNew,
  resolveService,
  withoutProvider,
  type Emitter,
  type ResourceOutcome,
} from './generate-support.ts';
import { isObject } from '../../core/ids.ts';
import { emitTcpRouter } from './generate-tcp.ts';

const DEFAULT_ASSIGNMENT_PRIORITY = 100;
// Traefik reserves priorities above MaxInt64−1000 for its internal routers
const MAX_USER_PRIORITY = 9223372036854775807n - 1000n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const HTTP_ROUTERS: [string, string] = ['http', 'routers'];
const HTTP_MIDDLEWARES: [string, string] = ['http', 'middlewares'];
const INTEGER = /^-?[0-9]+$/;

/** Applies one resource's overrides to the config (G5) and reports what was emitted. */
export function patchResource(emitter: Emitter, resource: Resource): ResourceOutcome {
  const warnings: string[] = [];
  const config = withDefaults(resource.config);
  const local = resource.source === 'local';
  if (resource.status !== 'active') return notEmitted(resource, warnings);
  if (!local && emitter.mode === 'none') {
    if (hasOverrides(resource, config))
      warnings.push('data source mode none: only own (local) resources are emitted; its overrides wait');
    return notEmitted(resource, warnings);
  }
  if (!local && !hasOverrides(resource, config)) return notEmitted(resource, warnings);

  const base = local
    ? localRouter(emitter, resource, warnings)
    : emitter.mode === 'pangolin'
      ? pangolinRouter(emitter, resource)
      : traefikRouter(emitter, resource, warnings);
  if (!base) {
    if (!local)
      warnings.push(
        `router ${resource.router} cannot be patched (absent upstream, or its key is taken); nothing emitted`,
      );
    return notEmitted(resource, warnings);
  }
  const { router, upstreamMiddlewares } = base;
  const mtlsOn = config.mtls.enabled && emitter.mtlsReady;
  if (config.mtls.enabled && !mtlsOn)
    warnings.push('mTLS is enabled for this resource but not globally (or no CA): not applied');

  const middlewares = middlewareChain(emitter, resource, config, mtlsOn, upstreamMiddlewares);
  if (middlewares.length > 0) router.middlewares = middlewares;
  else if (Object.hasOwn(router, 'middlewares')) delete router.middlewares;

  if (resource.service_id !== null && resource.service_id !== undefined) {
    const service = resolveService(emitter, resource.service_id, 'http', `/api/resources/${resource.id}`, warnings);
    if (service !== null) router.service = service;
  }
  if (config.priority.priority !== null) router.priority = config.priority.priority;
  if (config.http.entrypoints.length > 0) router.entryPoints = [...config.http.entrypoints];
  applyTls(router, config);
  if (mtlsOn) {
    if (config.tls.options !== null)
      warnings.push(`tls.options "${config.tls.options}" is replaced by sm_mtls because mTLS is enabled`);
    tlsOf(router).options = 'sm_mtls';
    emitter.mtlsUsed = true;
  }
  if (config.tcp.enabled) emitTcpRouter(emitter, resource, config, router, warnings);

  const effectiveService = typeof router.service === 'string' ? router.service : resource.upstream_service;
  return { effective_middlewares: middlewares, effective_service: effectiveService, emitted: true, warnings };
}

function notEmitted(resource: Resource, warnings: string[]): ResourceOutcome {
  return { effective_middlewares: [], effective_service: resource.upstream_service, emitted: false, warnings };
}

/** Missing sub-objects (partial hand edits) take their API.md defaults; complete configs are used as they are. */
function withDefaults(config: Partial<ResourceConfig> | undefined): ResourceConfig {
  const c = config ?? {};
  if (c.http && c.tls && c.tcp && c.headers && c.priority && c.mtls && c.mtlswhitelist) return c as ResourceConfig;
  const d = defaultResourceConfig();
  return {
    http: { ...d.http, ...c.http },
    tls: { ...d.tls, ...c.tls },
    tcp: { ...d.tcp, ...c.tcp },
    headers: { ...d.headers, ...c.headers },
    priority: { ...d.priority, ...c.priority },
    mtls: { ...d.mtls, ...c.mtls },
    mtlswhitelist: { ...d.mtlswhitelist, ...c.mtlswhitelist },
  };
}

/** G5: any assignment, service or config value that differs from the API.md default. */
function hasOverrides(resource: Resource, c: ResourceConfig): boolean {
  if ((resource.middlewares?.length ?? 0) > 0 || (resource.external_middlewares?.length ?? 0) > 0) return true;
  if (resource.service_id !== null && resource.service_id !== undefined) return true;
  const tcpDefault = c.tcp.entrypoints.length === 1 && c.tcp.entrypoints[0] === 'tcp';
  const w = c.mtlswhitelist;
  return (
    c.http.entrypoints.length > 0 ||
    c.tls.cert_resolver !== null ||
    c.tls.domains !== null ||
    c.tls.options !== null ||
    c.tcp.enabled ||
    !tcpDefault ||
    c.tcp.sni_rule !== null ||
    c.tcp.service_id !== null ||
    hasKeys(c.headers.request) ||
    hasKeys(c.headers.response) ||
    c.priority.priority !== null ||
    c.mtls.enabled ||
    w.rules !== null ||
    w.request_headers !== null ||
    w.reject_message !== null ||
    w.reject_code !== null ||
    w.refresh_interval !== null ||
    w.external_data !== null
  );
}

interface BaseRouter {
  router: JsonObject;
  upstreamMiddlewares: string[];
}

/** Pangolin mode patches the upstream router in place (it lives in our deep copy). */
function pangolinRouter(emitter: Emitter, resource: Resource): BaseRouter | null {
  const routers = findSection(emitter.config, 'http', 'routers');
  const key = withoutProvider(resource.router || resource.name);
  const shared = routers && Object.hasOwn(routers, key) ? routers[key] : undefined;
  if (!isObject(shared)) return null;
  // the router object is shared with the upstream snapshot: patch a copy (copy-on-write)
  const router = cloneJson(shared);
  routers![key] = router;
  if (emitter.recording) emitter.recording.replaced = { key, router };
  return { router, upstreamMiddlewares: stringArray(router.middlewares) };
}

/**
 * An own resource (API.md §4.24): router `<id>` built from its definition, in every mode. Not
 * emitted (null, with a warning) without a service Traefik can find, or when the upstream already
 * holds the key `<id>`.
 */
function localRouter(emitter: Emitter, resource: Resource, warnings: string[]): BaseRouter | null {
  const serviceId = resource.service_id ?? null;
  const service =
    serviceId === null ? null : resolveService(emitter, serviceId, 'http', `/api/resources/${resource.id}`, warnings);
  if (service === null) {
    warnings.push(
      serviceId === null
        ? 'local resource without a service: nothing emitted'
        : `service ${serviceId} cannot be referenced: nothing emitted`,
    );
    return null;
  }
  const router: JsonObject = { rule: resource.rule, service };
  if ((resource.entrypoints ?? []).length > 0) router.entryPoints = [...resource.entrypoints];
  const tls = resourceTls(resource.tls);
  if (tls) router.tls = tls;
  if (resource.priority !== null && resource.priority !== undefined) router.priority = resource.priority;
  if (!putNew(emitter, 'router', HTTP_ROUTERS, resource.id, router)) {
    warnings.push(
      `router key ${resource.id} is already defined upstream: nothing emitted (give this resource another id)`,
    );
    return null;
  }
  return { router, upstreamMiddlewares: [] };
}

/** Traefik mode: a new router `<id>` that copies the discovered one and outranks it by one (G5). */
function traefikRouter(emitter: Emitter, resource: Resource, warnings: string[]): BaseRouter | null {
  const api = emitter.traefikRouters.get(resource.router);
  const provider = typeof api?.provider === 'string' ? api.provider : providerOf(resource.router);
  const router: JsonObject = {};
  const rule = typeof api?.rule === 'string' ? api.rule : resource.rule;
  if (rule) router.rule = rule;
  if (typeof api?.ruleSyntax === 'string' && api.ruleSyntax !== '') router.ruleSyntax = api.ruleSyntax;
  const entryPoints = api ? stringArray(api.entryPoints) : (resource.entrypoints ?? []);
  if (entryPoints.length > 0) router.entryPoints = [...entryPoints];
  const tls = api ? (isObject(api.tls) ? apiTls(api.tls) : null) : resourceTls(resource.tls);
  if (tls) router.tls = tls;
  const priority = nextPriority(api, resource, rule ?? '');
  if (typeof priority === 'bigint' && priority > MAX_USER_PRIORITY) {
    warnings.push(`priority ${priority} is above Traefik's maximum user priority; Traefik may reject the router`);
  }
  router.priority = priority;
  const service = typeof api?.service === 'string' ? api.service : resource.upstream_service;
  if (service) router.service = qualify(service, provider);
  const upstreamMiddlewares = api ? stringArray(api.middlewares) : [...(resource.upstream_middlewares ?? [])];
  for (let i = 0; i < upstreamMiddlewares.length; i++)
    upstreamMiddlewares[i] = qualify(upstreamMiddlewares[i], provider);
  if (!putNew(emitter, 'router', HTTP_ROUTERS, resource.id, router)) return null;
  return { router, upstreamMiddlewares };
}

/** Runtime tls minus `options: "default"`, which Traefik reports when none was set (naming it would pin it). */
function apiTls(tls: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key in tls) {
    if (Object.hasOwn(tls, key) && !(key === 'options' && tls[key] === 'default')) out[key] = cloneJson(tls[key]);
  }
  return out;
}

/**
 * Upstream priority + 1, exact: `priorityStr` first (JSON numbers above 2^53 may be rounded);
 * a plain number while that is exact, BigInt beyond (written as digits by the serializers).
 */
function nextPriority(api: JsonObject | undefined, resource: Resource, rule: string): number | bigint {
  let priority: number | bigint | null = null;
  const exact = api?.priorityStr;
  const loose = api ? api.priority : resource.priority;
  if (typeof exact === 'string' && INTEGER.test(exact)) priority = exact.length < 16 ? Number(exact) : BigInt(exact);
  else if (typeof loose === 'bigint') priority = loose;
  else if (typeof loose === 'number' && Number.isFinite(loose)) priority = Math.trunc(loose);
  // 0 (or never computed) means Traefik orders by rule length: outrank that instead
  if (priority === null || priority === 0 || priority === 0n) priority = rule.length;
  if (typeof priority === 'number' && Math.abs(priority) < Number.MAX_SAFE_INTEGER) return priority + 1;
  const next = BigInt(priority) + 1n;
  return next <= MAX_SAFE && next >= -MAX_SAFE ? Number(next) : next;
}

/** G6: mTLS, headers, assigned + external by priority, then the upstream middlewares; first wins. */
function middlewareChain(
  emitter: Emitter,
  resource: Resource,
  config: ResourceConfig,
  mtlsOn: boolean,
  upstream: string[],
): string[] {
  const chain: string[] = [];
  if (mtlsOn) {
    chain.push('sm_mtls_passcert', 'sm_mtls_verify');
    if (emitter.mtls.plugin?.installed) {
      const name = `${resource.id}_mtls`;
      putNew(emitter, 'middleware', HTTP_MIDDLEWARES, name, mtlsPluginMiddleware(emitter, config));
      chain.push(name);
    }
  }
  const { request, response } = config.headers;
  if (hasKeys(request) || hasKeys(response)) {
    const name = `${resource.id}_headers`;
    const headers: JsonObject = {};
    // values are passed through as given: "" is Traefik's "remove this header"
    if (hasKeys(request)) headers.customRequestHeaders = { ...request };
    if (hasKeys(response)) headers.customResponseHeaders = { ...response };
    putNew(emitter, 'middleware', HTTP_MIDDLEWARES, name, { headers });
    chain.push(name);
  }
  const refs: Reference[] = [];
  for (const a of resource.middlewares ?? []) {
    if (emitter.middlewares.has(a.id)) refs.push({ ref: a.id, priority: assignmentPriority(a.priority), ours: true });
    else emitter.dangling.push({ from: `/api/resources/${resource.id}`, ref: `/api/middlewares/${a.id}` });
  }
  for (const e of resource.external_middlewares ?? []) {
    refs.push({ ref: externalReference(e.name, e.provider), priority: assignmentPriority(e.priority), ours: false });
  }
  refs.sort(byAssignmentOrder);
  for (const r of refs) pushOnce(chain, r.ref);
  for (const name of upstream) pushOnce(chain, name);
  return chain;
}

interface Reference {
  ref: string;
  priority: number;
  ours: boolean;
}

/** G6 (3): priority descending; ties: ours before external, then reference ascending. */
function byAssignmentOrder(x: Reference, y: Reference): number {
  return y.priority - x.priority || (x.ours === y.ours ? compare(x.ref, y.ref) : x.ours ? -1 : 1);
}

/** De-duplication, first occurrence wins; chains are short, so a scan beats a Set per router. */
function pushOnce(chain: string[], name: string): void {
  if (!chain.includes(name)) chain.push(name);
}

/** G8: the mtlswhitelist plugin body, global settings with the resource's non-null fields on top. */
function mtlsPluginMiddleware(emitter: Emitter, config: ResourceConfig): JsonObject {
  const global = emitter.mtls.middleware;
  const own = config.mtlswhitelist;
  const interval = own.refresh_interval ?? global.refresh_interval;
  const body: JsonObject = {
    rules: cloneJson(own.rules ?? global.rules),
    rejectMessage: {
      message: own.reject_message ?? global.reject_message,
      code: own.reject_code ?? global.reject_code,
    },
    refreshInterval: typeof interval === 'number' ? `${interval}s` : interval,
  };
  const requestHeaders = own.request_headers ?? global.request_headers;
  if (hasKeys(requestHeaders)) body.requestHeaders = { ...requestHeaders };
  const externalData = own.external_data ?? global.external_data;
  if (externalData !== null) body.externalData = cloneJson(externalData);
  return { plugin: { [emitter.mtls.plugin?.key ?? 'mtlswhitelist']: body } };
}

/** G7: certResolver / domains / options from `config.tls` when non-null. */
function applyTls(router: JsonObject, config: ResourceConfig): void {
  const { cert_resolver, domains, options } = config.tls;
  if (cert_resolver === null && domains === null && options === null) return;
  const tls = tlsOf(router);
  if (cert_resolver !== null) tls.certResolver = cert_resolver;
  if (domains !== null)
    tls.domains = domains.map((d) =>
      d.sans && d.sans.length > 0 ? { main: d.main, sans: [...d.sans] } : { main: d.main },
    );
  if (options !== null) tls.options = options;
}

/** The router's tls object; a router without one gains it. */
function tlsOf(router: JsonObject): JsonObject {
  if (!isObject(router.tls)) router.tls = {};
  return router.tls as JsonObject;
}

function resourceTls(tls: ResourceTls | null | undefined): JsonObject | null {
  if (!tls) return null;
  const out: JsonObject = {};
  if (tls.cert_resolver) out.certResolver = tls.cert_resolver;
  if (tls.domains) out.domains = cloneJson(tls.domains);
  if (tls.options && tls.options !== 'default') out.options = tls.options;
  return out;
}

/** §4.4: `name` if qualified, else `name@provider` when a provider is set, else `name`. */
function externalReference(name: string, provider: string | null): string {
  return name.includes('@') || !provider ? name : `${name}@${provider}`;
}

function assignmentPriority(priority: number | null | undefined): number {
  return typeof priority === 'number' && priority > 0 ? priority : DEFAULT_ASSIGNMENT_PRIORITY;
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function qualify(name: string, provider: string | null): string {
  return provider === null || name.includes('@') ? name : `${name}@${provider}`;
}

function providerOf(name: string): string | null {
  const at = name.lastIndexOf('@');
  return at === -1 ? null : name.slice(at + 1);
}
