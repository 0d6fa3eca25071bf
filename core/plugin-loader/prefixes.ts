/** Route prefix rules for third-party plugins (API.md §6): format, reserved built-in prefixes, overlaps. */

/** Built-in group names (API.md §6): no plugin may take one as its name. */
export const BUILTIN_GROUP_NAMES: readonly string[] = [
  'health', 'middlewares', 'services', 'resources', 'datasource', 'plugins', 'proxy', 'mtls', 'proxy-config',
  'backup', 'container', 'ip', 'logs', 'jobs', 'auth', 'system', 'docs', 'openapi', 'ext',
];

// `/api/ext` itself is reserved but is also the plugins' own namespace, so only the exact path is taken.
const RESERVED_TREES = [...BUILTIN_GROUP_NAMES.filter((n) => n !== 'ext'), 'v1'].map((n) => `/api/${n}`);
const RESERVED_EXACT = ['/api/ext', '/api/openapi.json'];
// Lower-case path segments without parameters (`:id`) or wildcards, no trailing slash.
const PREFIX_FORMAT = /^\/api(\/[a-z0-9][a-z0-9._-]*)+$/;

/** The prefix a plugin gets when its manifest names none. */
export function defaultPrefix(name: string): string {
  return `/api/ext/${name}`;
}

/** Whether one prefix equals the other or lies under it (whole path segments: /api/a is not under /api/ab). */
export function prefixesOverlap(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** Why a prefix is unacceptable regardless of other plugins, or undefined when it is fine. */
export function prefixProblem(prefix: string): string | undefined {
  if (!PREFIX_FORMAT.test(prefix)) return `prefix "${prefix}" must start with /api/ and consist of lower-case path segments ([a-z0-9._-], no parameters, no trailing slash)`;
  if (prefix.split('/').some((segment) => segment === '..' || segment === '.')) return `prefix "${prefix}" must not contain . or .. segments`;
  if (RESERVED_EXACT.includes(prefix)) return `prefix "${prefix}" is reserved`;
  const builtin = RESERVED_TREES.find((reserved) => prefix === reserved || prefix.startsWith(`${reserved}/`));
  return builtin ? `prefix "${prefix}" lies under the built-in prefix ${builtin}` : undefined;
}
