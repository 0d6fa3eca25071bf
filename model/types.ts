/**
 * Input shapes of the Traefik configuration generator (API.md §4.2–§4.4, §4.8, §4.9).
 * Field names follow API.md exactly (snake_case) so store objects can be passed in as they are.
 */
import type { MtlsRuleData } from './resource-config.ts';
import type { DiscoveredService as UpstreamDiscoveredService } from './upstream-state.ts';

/** A JSON object as parsed losslessly (unsafe integers are BigInt). */
export type JsonObject = Record<string, unknown>;

/** A middleware of ours (§4.2): emitted as `http.middlewares[id] = {[type]: config}`. */
export interface Middleware {
  id: string;
  name: string;
  type: string;
  config: JsonObject;
  description?: string;
}

/** A manual or template service (§4.3): emitted as `<protocol>.services[id] = {[type]: config}`. */
export interface Service {
  id: string;
  name: string;
  type: string;
  protocol: 'http' | 'tcp' | 'udp';
  config: JsonObject;
  description?: string;
  source?: 'manual' | 'template';
}

/**
 * A discovered (read-only, never emitted) service mirrored from the upstream (§4.3): the fields the
 * generator reads. `config`, the body under the type key, is optional: when known it lets TCP
 * servers be derived in Traefik mode (G9).
 */
export type DiscoveredService = Pick<
  UpstreamDiscoveredService,
  'id' | 'protocol' | 'type' | 'upstream_name' | 'provider'
> &
  Partial<Pick<UpstreamDiscoveredService, 'config'>>;

export interface AssignedMiddleware {
  id: string;
  priority: number;
}

export interface ExternalMiddleware {
  name: string;
  priority: number;
  provider: string | null;
}

export interface TlsDomain {
  main: string;
  sans?: string[];
}

export interface MtlsWhitelistOverride {
  rules: MtlsRuleData[] | null;
  request_headers: Record<string, string> | null;
  reject_message: string | null;
  reject_code: number | null;
  refresh_interval: string | number | null;
  external_data: JsonObject | null;
}

/** The per-resource override sub-objects (§4.4 Config table); every key present with its default. */
export interface ResourceConfig {
  http: { entrypoints: string[] };
  tls: { cert_resolver: string | null; domains: TlsDomain[] | null; options: string | null };
  tcp: { enabled: boolean; entrypoints: string[]; sni_rule: string | null; service_id: string | null };
  headers: { request: Record<string, string>; response: Record<string, string> };
  priority: { priority: number | null };
  mtls: { enabled: boolean };
  mtlswhitelist: MtlsWhitelistOverride;
}

/** Upstream TLS of a discovered router, as stored on the resource. */
export interface ResourceTls {
  cert_resolver: string | null;
  domains: TlsDomain[] | null;
  options: string | null;
}

/** A resource (§4.4): discovered fields plus our overrides. */
export interface Resource {
  id: string;
  name: string;
  /** full key, e.g. `1-app-router@http` */
  router: string;
  /** `local`: defined by Stack Manager itself (API.md §4.24), emitted as router `<id>` */
  source: 'pangolin' | 'traefik' | 'local';
  status: 'active' | 'disabled';
  missing_since?: string | null;
  rule: string;
  host: string | null;
  hosts: string[];
  entrypoints: string[];
  tls: ResourceTls | null;
  /** may be a BigInt when above 2^53−1 (internal Traefik routers use MaxInt64) */
  priority: number | bigint | null;
  upstream_service: string;
  upstream_middlewares: string[];
  middlewares: AssignedMiddleware[];
  external_middlewares: ExternalMiddleware[];
  service_id: string | null;
  config: ResourceConfig;
  /** local resources built from `hosts`: the PathPrefix in their rule (API.md §4.24) */
  path_prefix?: string | null;
}

/** Global settings of the mtlswhitelist plugin middleware (§4.8 MiddlewareConfig). */
export interface MiddlewareConfig {
  rules: MtlsRuleData[];
  request_headers: Record<string, string>;
  reject_message: string;
  reject_code: number;
  /** `"<n>s"` or a Go duration (integer seconds are stored as `"<n>s"`) */
  refresh_interval: string;
  external_data: JsonObject | null;
}

/** Everything about mTLS the generator needs (§4.8, G6–G8). */
export interface MtlsState {
  enabled: boolean;
  ca_pem: string | null;
  /** null when the static config path is unset or unreadable */
  plugin: { installed: boolean; key: string } | null;
  middleware: MiddlewareConfig;
  /** forwardAuth address of `/api/mtls/verify` as Traefik reaches it */
  verify_url: string;
  /** CA file path as Traefik sees it; wins over the inline PEM when set */
  proxy_ca_path: string | null;
}

/** API.md defaults of the Config sub-objects; a fresh object on every call. */
export function defaultResourceConfig(): ResourceConfig {
  return {
    http: { entrypoints: [] },
    tls: { cert_resolver: null, domains: null, options: null },
    tcp: { enabled: false, entrypoints: ['tcp'], sni_rule: null, service_id: null },
    headers: { request: {}, response: {} },
    priority: { priority: null },
    mtls: { enabled: false },
    mtlswhitelist: {
      rules: null,
      request_headers: null,
      reject_message: null,
      reject_code: null,
      refresh_interval: null,
      external_data: null,
    },
  };
}

/** API.md defaults of the global mtlswhitelist MiddlewareConfig (§4.8). */
export function defaultMiddlewareConfig(): MiddlewareConfig {
  return {
    rules: [],
    request_headers: {},
    reject_message: 'Access denied: a valid client certificate is required',
    reject_code: 403,
    refresh_interval: '300s',
    external_data: null,
  };
}
