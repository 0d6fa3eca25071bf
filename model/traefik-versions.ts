/**
 * Which Traefik version first decodes each dynamic-configuration key added since v3.0 (API.md §4.9
 * G14). Traefik's HTTP provider refuses the WHOLE document when one key is unknown to it ("cannot
 * decode configuration data: field not found, node: <key>") and keeps its previous one, so the
 * document served to a Traefik of version V must hold no key V cannot decode.
 *
 * Sources, per entry: Traefik's reference docs and pull requests (found with the docs/code search),
 * and, for every key, a probe of the real binaries this project tests with: a document holding the
 * key served to Traefik 3.5.3 and 3.7.15 through the HTTP provider (`test/e2e/version-gate.test.ts`
 * repeats the decisive ones). "3.5.3: field not found" below is that binary's verbatim refusal.
 * A key that both binaries accept is not listed when it exists since v3.0.
 */

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

export const VERSIONED_KEYS: readonly VersionedKey[] = [
  // v3.5
  {
    at: 'http.routers.*.observability',
    key: 'traceVerbosity',
    since: '3.5.0',
    source: 'Traefik docs, routing/routers "observability.traceVerbosity" (v3.5); 3.5.3 decodes it',
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
    at: 'http.routers.*',
    key: 'parentRefs',
    since: '3.6.0',
    source: `Traefik docs, routers "parentRefs" / multi-layer routing (v3.6); ${PROBE}`,
  },
  {
    at: 'http.middlewares.*.forwardAuth',
    key: 'maxResponseBodySize',
    since: '3.6.9',
    source: `security release 3.6.9 (forwardAuth response body limit); ${PROBE}`,
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

/** The table as a tree over path segments, walked alongside a document. */
export interface KeyNode {
  /** keys gated on the object at this node */
  keys: Map<string, VersionedKey>;
  children: Map<string, KeyNode>;
  /** the same as arrays, and the `*` child: the gate walks tens of thousands of objects per pass */
  keyList: [string, VersionedKey][];
  childList: [string, KeyNode][];
  any: KeyNode | undefined;
}

const newNode = (): KeyNode => ({ keys: new Map(), children: new Map(), keyList: [], childList: [], any: undefined });

function freeze(node: KeyNode): void {
  node.keyList = [...node.keys];
  node.childList = [...node.children].filter(([name]) => name !== '*');
  node.any = node.children.get('*');
  for (const child of node.children.values()) freeze(child);
}

export function keyTree(entries: readonly VersionedKey[] = VERSIONED_KEYS): KeyNode {
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
  freeze(root);
  return root;
}

/** The shared tree of VERSIONED_KEYS. */
export const KEY_TREE: KeyNode = keyTree();

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

const escape = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

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
      if (Object.hasOwn(object, key)) found.push({ pointer: `${path}/${escape(key)}`, entry });
    const any = at.children.get('*');
    for (const key of Object.keys(object)) {
      const child = at.children.get(key) ?? any;
      if (child) walk(object[key], child, `${path}/${escape(key)}`);
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
