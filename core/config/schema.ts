/** TypeBox schema of the settings (API.md §5): the one description every source is validated against. */
import { Type, type Static } from '@sinclair/typebox';
import { SLUG_PATTERN } from '../ids.ts';

const Str = (opts = {}) => Type.String(opts);
const Int = (minimum: number, maximum = Number.MAX_SAFE_INTEGER) => Type.Integer({ minimum, maximum });
const StrList = Type.Array(Type.String());

export const ConfigSchema = Type.Object({
  server: Type.Object({
    port: Int(0, 65535),
    host: Str({ minLength: 1 }),
    trust_proxy: Type.Union([Type.Boolean(), Type.Integer({ minimum: 0 }), StrList]),
    body_limit: Int(1024),
    request_timeout_ms: Int(1000),
  }),
  log: Type.Object({
    level: Type.Union(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].map((l) => Type.Literal(l))),
  }),
  storage: Type.Object({
    data_dir: Str({ minLength: 1 }),
    // auto: inotify, switching to polling when the kernel's watch limit is reached; poll: always
    watch: Type.Union([Type.Literal('auto'), Type.Literal('poll')]),
    poll_interval_ms: Int(100, 60_000),
    // the stat reconcile under the inotify watcher (core/store reconcileMs): 0 = off, else 100 ms-1 h
    reconcile_ms: Type.Union([Type.Literal(0), Int(100, 3_600_000)]),
  }),
  backup: Type.Object({
    dir: Str({ minLength: 1 }),
    retention: Type.Object({ keep_last: Int(0), max_age_days: Int(0) }),
    schedule: Type.String({ pattern: '^$|^[0-9]+(s|m|h|d)$' }),
    include: StrList,
    max_restore_bytes: Int(1),
    max_restore_entries: Int(100, 10_000_000),
  }),
  plugins: Type.Object({
    dir: Str({ minLength: 1 }),
    enabled: StrList,
    config: Type.Record(Type.String(), Type.Unknown()),
  }),
  ui: Type.Object({ enabled: Type.Boolean(), dir: Type.String() }),
  events: Type.Object({ heartbeat_ms: Int(100), replay_size: Int(1, 100_000), max_pending_bytes: Int(1024) }),
  auth: Type.Object({
    mode: Type.Union([Type.Literal('off'), Type.Literal('ops'), Type.Literal('all')]),
    max_failures: Int(1),
    failure_window_s: Int(1),
  }),
  provider: Type.Object({ token: Type.String() }),
  cors: Type.Object({ origins: StrList }),
  datasources: Type.Object({
    pangolin_url: Type.String({ pattern: '^https?://' }),
    traefik_url: Type.String({ pattern: '^https?://' }),
    active: Type.String({ pattern: SLUG_PATTERN }),
  }),
  discovery: Type.Object({ empty_confirmations: Int(1, 1000), exclude: StrList }),
  validation: Type.Object({ allow_unknown_traefik_fields: Type.Boolean() }),
  proxy: Type.Object({
    static_config_path: Type.String(),
    // the Traefik version documents are gated for (API.md §4.9 G14); '' = read from Traefik's /api/version
    traefik_version: Type.String({ pattern: '^$|^v?[0-9]+\\.[0-9]+(\\.[0-9]+)?([-+].*)?$' }),
    // host path mounted at Traefik's /plugins-local (API.md §4.20 vendoring); '' = vendoring off (503)
    plugins_local_dir: Type.String(),
    // Traefik's Prometheus endpoint (`traefik_tls_certs_not_after`) and its ACME store, for certificate
    // expiry (API.md §4.21 certs); '' = that source is not read
    metrics_url: Type.String({ pattern: '^$|^https?://' }),
    acme_path: Type.String(),
  }),
  // GET /metrics (API.md §4.22): class O, or P (no token) when public
  metrics: Type.Object({ public: Type.Boolean() }),
  // certificate expiry checks (API.md §4.21 certs): Traefik's metrics and acme.json read this often
  certs: Type.Object({ check_interval_s: Int(1, 604_800) }),
  // notifications (API.md §4.21): Pangolin down this long before it is reported; CrowdSec digest period;
  // how long one send may take; how often due retries, quiet-hour ends and digests are looked for
  notifications: Type.Object({
    upstream_down_after_s: Int(0, 86_400),
    crowdsec_digest_s: Int(10, 86_400),
    send_timeout_ms: Int(100, 120_000),
    tick_ms: Int(10, 60_000),
  }),
  // live status (API.md §4.19): a check of every Traefik instance settle_s after each generation, and every interval_s
  live: Type.Object({ settle_s: Int(0, 3600), interval_s: Int(1, 86_400) }),
  plugins_catalogue: Type.Object({ url: Type.String({ pattern: '^https?://' }), ttl_s: Int(0) }),
  // the registry Traefik downloads plugins from (API.md §4.20): <url>/public/download/<module>/<version>
  plugins_registry: Type.Object({ url: Type.String({ pattern: '^https?://' }) }),
  docker: Type.Object({ host: Type.String(), socket: Type.String() }),
  // compose_file: the compose file that publishes Gerbil's ports (API.md §4.20; settings.yaml `compose_file` wins)
  stack: Type.Object({ containers: StrList, project: Type.String(), compose_file: Type.String() }),
  containers: Type.Object({
    stop_timeout_s: Int(0),
    updates_ttl_s: Int(0),
    // update jobs: a container without a healthcheck counts as healthy once it has run this long (API.md §4.11: 10 s)
    update_stable_s: Int(1, 600),
    // the background image update check (API.md §4.11, image_update events): every this many seconds, on the leader; 0 = off
    updates_check_interval_s: Int(0, 604_800),
  }),
  crowdsec: Type.Object({
    url: Type.String({ pattern: '^https?://' }),
    bouncer_key: Type.String(),
    machine_id: Type.String(),
    machine_password: Type.String(),
    timeout_ms: Int(100),
    alerts_limit: Int(1),
    allowlist_sweep_s: Int(1),
  }),
  ip: Type.Object({ public_providers: StrList }),
  logs: Type.Object({
    proxy_access_log: Type.String(),
    services: Type.Object({ secengine: Str(), proxy: Str(), tunnelapp: Str(), tunnelgw: Str() }),
    max_scan_bytes: Int(1),
    ws_buffer_lines: Int(1),
  }),
  mtls: Type.Object({
    verify_url: Type.String({ pattern: '^https?://' }),
    proxy_ca_path: Type.String(),
    crl_validity_days: Int(1),
  }),
  templates: Type.Object({ seed: Type.Boolean() }),
  audit: Type.Object({ enabled: Type.Boolean() }),
  /** Config history in data/.history (API.md §4.24): a git repository fed by every data dir change. */
  history: Type.Object({
    enabled: Type.Boolean(),
    remote_url: Type.String(),
    remote_username: Type.String(),
    remote_password: Type.String(),
    max_commits: Int(10, 10_000_000),
    batch_ms: Int(10, 60_000),
    git_binary: Type.String({ minLength: 1 }),
  }),
  /** Several managers on etcd (issue 14): off while etcd_endpoints is empty. */
  cluster: Type.Object({
    etcd_endpoints: Type.Array(Type.String({ pattern: '^https?://' })),
    prefix: Type.String({ pattern: '^/.*' }),
    node_name: Type.String(),
    lease_ttl_s: Int(2, 300),
    call_timeout_ms: Int(100, 60_000),
    username: Type.String(),
    password: Type.String(),
    tls: Type.Object({ ca_file: Type.String(), cert_file: Type.String(), key_file: Type.String() }),
  }),
});

export type AppConfig = Static<typeof ConfigSchema>;

/** Environment variable → dotted config key (API.md §5). Lists are comma-separated. */
export const ENV_MAP: Record<string, string> = {
  PORT: 'server.port',
  HOST: 'server.host',
  TRUST_PROXY: 'server.trust_proxy',
  BODY_LIMIT: 'server.body_limit',
  REQUEST_TIMEOUT_MS: 'server.request_timeout_ms',
  LOG_LEVEL: 'log.level',
  DATA_DIR: 'storage.data_dir',
  DATA_WATCH: 'storage.watch',
  DATA_POLL_INTERVAL_MS: 'storage.poll_interval_ms',
  DATA_RECONCILE_MS: 'storage.reconcile_ms',
  BACKUP_DIR: 'backup.dir',
  BACKUP_KEEP_LAST: 'backup.retention.keep_last',
  BACKUP_MAX_AGE_DAYS: 'backup.retention.max_age_days',
  BACKUP_SCHEDULE: 'backup.schedule',
  BACKUP_INCLUDE: 'backup.include',
  BACKUP_MAX_RESTORE_ENTRIES: 'backup.max_restore_entries',
  PLUGINS_DIR: 'plugins.dir',
  PLUGINS_ENABLED: 'plugins.enabled',
  UI_DIR: 'ui.dir',
  UI_ENABLED: 'ui.enabled',
  AUTH_MODE: 'auth.mode',
  PROVIDER_TOKEN: 'provider.token',
  CORS_ORIGINS: 'cors.origins',
  PANGOLIN_URL: 'datasources.pangolin_url',
  PANGOLIN_API_URL: 'datasources.pangolin_url', // middleware-manager's name (API.md §7), a fallback
  TRAEFIK_API_URL: 'datasources.traefik_url',
  ACTIVE_DATA_SOURCE: 'datasources.active',
  DISCOVERY_EMPTY_CONFIRMATIONS: 'discovery.empty_confirmations',
  PROXY_STATIC_CONFIG: 'proxy.static_config_path',
  PROXY_PLUGINS_LOCAL_DIR: 'proxy.plugins_local_dir',
  PLUGINS_REGISTRY_URL: 'plugins_registry.url',
  TRAEFIK_STATIC_CONFIG_PATH: 'proxy.static_config_path', // fallback, API.md §7
  PROXY_TRAEFIK_VERSION: 'proxy.traefik_version',
  PROXY_METRICS_URL: 'proxy.metrics_url',
  PROXY_ACME_PATH: 'proxy.acme_path',
  METRICS_PUBLIC: 'metrics.public',
  CERTS_CHECK_INTERVAL_S: 'certs.check_interval_s',
  NOTIFICATIONS_UPSTREAM_DOWN_AFTER_S: 'notifications.upstream_down_after_s',
  NOTIFICATIONS_CROWDSEC_DIGEST_S: 'notifications.crowdsec_digest_s',
  NOTIFICATIONS_SEND_TIMEOUT_MS: 'notifications.send_timeout_ms',
  NOTIFICATIONS_TICK_MS: 'notifications.tick_ms',
  LIVE_SETTLE_S: 'live.settle_s',
  LIVE_INTERVAL_S: 'live.interval_s',
  PLUGIN_CATALOGUE_URL: 'plugins_catalogue.url',
  DOCKER_HOST: 'docker.host',
  DOCKER_SOCKET: 'docker.socket',
  STACK_CONTAINERS: 'stack.containers',
  CONTAINERS_UPDATES_CHECK_INTERVAL_S: 'containers.updates_check_interval_s',
  STACK_PROJECT: 'stack.project',
  STACK_COMPOSE_FILE: 'stack.compose_file',
  CROWDSEC_URL: 'crowdsec.url',
  CROWDSEC_BOUNCER_KEY: 'crowdsec.bouncer_key',
  CROWDSEC_MACHINE_ID: 'crowdsec.machine_id',
  CROWDSEC_MACHINE_PASSWORD: 'crowdsec.machine_password',
  CROWDSEC_ALLOWLIST_SWEEP_S: 'crowdsec.allowlist_sweep_s',
  PUBLIC_IP_PROVIDERS: 'ip.public_providers',
  LOGS_PROXY_ACCESS_LOG: 'logs.proxy_access_log',
  LOGS_SERVICE_SECENGINE: 'logs.services.secengine',
  LOGS_SERVICE_PROXY: 'logs.services.proxy',
  LOGS_SERVICE_TUNNELAPP: 'logs.services.tunnelapp',
  LOGS_SERVICE_TUNNELGW: 'logs.services.tunnelgw',
  MTLS_VERIFY_URL: 'mtls.verify_url',
  MTLS_PROXY_CA_PATH: 'mtls.proxy_ca_path',
  HISTORY_ENABLED: 'history.enabled',
  HISTORY_REMOTE_URL: 'history.remote_url',
  HISTORY_REMOTE_USERNAME: 'history.remote_username',
  HISTORY_REMOTE_PASSWORD: 'history.remote_password',
  HISTORY_MAX_COMMITS: 'history.max_commits',
  HISTORY_BATCH_MS: 'history.batch_ms',
  HISTORY_GIT_BINARY: 'history.git_binary',
  CLUSTER_ETCD_ENDPOINTS: 'cluster.etcd_endpoints',
  CLUSTER_PREFIX: 'cluster.prefix',
  CLUSTER_NODE_NAME: 'cluster.node_name',
  CLUSTER_LEASE_TTL_S: 'cluster.lease_ttl_s',
  CLUSTER_ETCD_USERNAME: 'cluster.username',
  CLUSTER_ETCD_PASSWORD: 'cluster.password',
  CLUSTER_ETCD_CA_FILE: 'cluster.tls.ca_file',
  CLUSTER_ETCD_CERT_FILE: 'cluster.tls.cert_file',
  CLUSTER_ETCD_KEY_FILE: 'cluster.tls.key_file',
};

/** Fallback names that only apply when the primary variable is absent. */
export const ENV_FALLBACKS: Record<string, string> = {
  PANGOLIN_API_URL: 'PANGOLIN_URL',
  TRAEFIK_STATIC_CONFIG_PATH: 'PROXY_STATIC_CONFIG',
};
