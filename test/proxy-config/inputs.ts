/**
 * Builders for generator inputs shared by the proxy-config tests (not a test file itself).
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parseLossless } from '../../model/lossless-json.ts';
import { defaultMiddlewareConfig, defaultResourceConfig } from '../../model/types.ts';
import type { Middleware, MtlsState, Resource, ResourceConfig, Service } from '../../model/types.ts';
import { generateConfig, type GenerationInput, type GenerationResult } from '../../model/generate/generate.ts';
import { createSchemaChecker } from '../../plugins/proxy-config/schema-check.ts';
import { SHARED, fixture } from '../helpers/shared.ts';

export const SCHEMA_PATH = path.join(SHARED, 'schemas', 'traefik-v3-file-provider.json');
export const schemaWarnings = createSchemaChecker(SCHEMA_PATH);

/** A fixture file parsed losslessly (MaxInt64 priorities stay exact). */
export function loadFixture(...parts: string[]): unknown {
  return parseLossless(readFileSync(fixture(...parts), 'utf8'));
}

/** A generated configuration, loosely typed so assertions can reach into it. */
export type Config = Record<string, any>;

/** Per config sub-object, the fields to change from its default. */
export type ConfigPatch = { [K in keyof ResourceConfig]?: Partial<ResourceConfig[K]> };

/** An active resource with defaults; `config` entries are merged over the default sub-objects. */
export function resource(
  id: string,
  fields: Partial<Omit<Resource, 'config'>> = {},
  config: ConfigPatch = {},
): Resource {
  const defaults = defaultResourceConfig();
  const merged = { ...defaults } as Record<string, unknown>;
  for (const [key, value] of Object.entries(config))
    merged[key] = { ...(defaults as unknown as Record<string, object>)[key], ...value };
  return {
    id,
    name: id,
    router: `${id}@http`,
    source: 'pangolin',
    status: 'active',
    missing_since: null,
    rule: `Host(\`${id}.example.com\`)`,
    host: `${id}.example.com`,
    hosts: [`${id}.example.com`],
    entrypoints: ['websecure'],
    tls: { cert_resolver: 'letsencrypt', domains: null, options: null },
    priority: 100,
    upstream_service: `${id}-service`,
    upstream_middlewares: [],
    middlewares: [],
    external_middlewares: [],
    service_id: null,
    ...fields,
    config: merged as unknown as ResourceConfig,
  };
}

/** A router of the Pangolin fixture `traefik-config.json`, as tests name it. */
export interface FixtureRouter {
  /** resource id */
  id: string;
  /** router key without `@http` */
  name: string;
  host: string;
  /** upstream service key */
  service: string;
}

/** The resource discovery makes of a fixture router (one Host, `badger` upstream), with extra fields and config patches. */
export function fixtureResource(
  router: FixtureRouter,
  fields: Partial<Resource> = {},
  config: ConfigPatch = {},
): Resource {
  return resource(
    router.id,
    {
      router: `${router.name}@http`,
      name: router.name,
      rule: `Host(\`${router.host}\`)`,
      host: router.host,
      hosts: [router.host],
      upstream_service: router.service,
      upstream_middlewares: ['badger'],
      ...fields,
    },
    config,
  );
}

export function mtlsState(fields: Partial<MtlsState> = {}): MtlsState {
  return {
    enabled: false,
    ca_pem: null,
    plugin: null,
    middleware: defaultMiddlewareConfig(),
    verify_url: 'http://stack-manager:3000/api/mtls/verify',
    proxy_ca_path: null,
    ...fields,
  };
}

export function pangolinInput(upstream: unknown, fields: Partial<GenerationInput> = {}): GenerationInput {
  return {
    mode: 'pangolin',
    upstream,
    middlewares: [],
    services: [],
    discoveredServices: [],
    resources: [],
    mtls: mtlsState(),
    ...fields,
  };
}

/** Generates in Pangolin mode over the fixture `traefik-config.json` with `resources` and any other inputs. */
export function generatePangolin(
  resources: Resource[],
  extra: Partial<GenerationInput> = {},
): { result: GenerationResult; config: Config } {
  const result = generateConfig(pangolinInput(loadFixture('pangolin', 'traefik-config.json'), { resources, ...extra }));
  return { result, config: result.config as Config };
}

export const authelia: Middleware = {
  id: 'authelia',
  name: 'Authelia',
  type: 'forwardAuth',
  description: 'SSO in front of internal apps',
  config: {
    address: 'http://authelia:9091/api/authz/forward-auth',
    trustForwardHeader: true,
    authResponseHeaders: ['Remote-User', 'Remote-Groups'],
  },
};

export const rateLimit: Middleware = {
  id: 'rate-limit',
  name: 'Rate limit',
  type: 'rateLimit',
  config: { average: 100, burst: 50 },
};

export const appV2: Service = {
  id: 'app-v2',
  name: 'App v2',
  type: 'loadBalancer',
  protocol: 'http',
  source: 'manual',
  config: { servers: [{ url: 'http://10.0.0.7:8080' }] },
};

/** The upstream body of the API.md §4.9 worked example, as Pangolin sends it. */
export const WORKED_UPSTREAM = `{"http": {
  "middlewares": {
    "badger": {"plugin": {"badger": {"apiBaseUrl": "http://pangolin:3001/api/v1", "userSessionCookieName": "p_session_token", "resourceSessionRequestParam": "resource_session_request_param"}}},
    "redirect-to-https": {"redirectScheme": {"scheme": "https"}}},
  "routers": {
    "1-app-router": {"entryPoints": ["websecure"], "middlewares": ["badger"], "priority": 100, "rule": "Host(\`app.example.com\`)", "service": "1-app-service", "tls": {"certResolver": "letsencrypt"}},
    "1-app-router-redirect": {"entryPoints": ["web"], "middlewares": ["redirect-to-https"], "rule": "Host(\`app.example.com\`)", "service": "1-app-service"}},
  "services": {
    "1-app-service": {"loadBalancer": {"servers": [{"url": "http://100.89.128.4:57920"}]}}}}}`;

/** The worked example's resource `1-app-router` with the overrides of `resources/1-app-router.yaml`. */
export function workedResource(): Resource {
  return resource(
    '1-app-router',
    {
      rule: 'Host(`app.example.com`)',
      host: 'app.example.com',
      hosts: ['app.example.com'],
      upstream_service: '1-app-service',
      upstream_middlewares: ['badger'],
      middlewares: [
        { id: 'authelia', priority: 200 },
        { id: 'rate-limit', priority: 100 },
      ],
      external_middlewares: [{ name: 'crowdsec@file', priority: 150, provider: null }],
      service_id: 'app-v2',
    },
    { headers: { request: { 'X-Forwarded-Proto': 'https' }, response: {} }, priority: { priority: 500 } },
  );
}

/** Router `name` of a generated config (throws if absent, so tests fail loudly). */
export function router(config: Record<string, unknown>, name: string, protocol = 'http'): Record<string, unknown> {
  const routers = (config[protocol] as Record<string, Record<string, unknown>>).routers as Record<
    string,
    Record<string, unknown>
  >;
  if (!routers[name]) throw new Error(`no router ${name}`);
  return routers[name];
}

/** Object `name` of config[protocol][kind] (undefined when absent). */
export function entry(config: Record<string, unknown>, protocol: string, kind: string, name: string): unknown {
  const part = config[protocol] as Record<string, Record<string, unknown>> | undefined;
  return part?.[kind]?.[name];
}
