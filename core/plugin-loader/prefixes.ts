/** Route prefix rules for third-party plugins (API.md §6): format, reserved built-in prefixes, overlaps. */

/**
 * Names core keeps besides the built-in groups' own: `docs` (Swagger UI at /api/docs) and `ext`
 * (the plugins' namespace). The group names are not listed here: they come from the registered
 * group list (plugins/index.ts, passed in by buildApp), so a name and its group cannot drift apart.
 */
const CORE_NAMES = ['docs', 'ext'];

/** Names no plugin may take (API.md §6): every built-in group's name and core's own. */
export function reservedNames(builtinGroups: readonly string[]): readonly string[] {
  return [...new Set([...builtinGroups, ...CORE_NAMES])];
}

/** `/api/<name>` trees of the reserved names; `/api/ext` itself is reserved but is also the plugins' own namespace, so only the exact path is taken. */
function reservedTrees(reserved: readonly string[]): string[] {
  return [...reserved.filter((n) => n !== 'ext'), 'v1'].map((n) => `/api/${n}`);
}
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

/** Why a prefix is unacceptable regardless of other plugins, or undefined when it is fine; `reserved` is reservedNames(). */
export function prefixProblem(prefix: string, reserved: readonly string[]): string | undefined {
  if (!PREFIX_FORMAT.test(prefix))
    return `prefix "${prefix}" must start with /api/ and consist of lower-case path segments ([a-z0-9._-], no parameters, no trailing slash)`;
  if (prefix.split('/').some((segment) => segment === '..' || segment === '.'))
    return `prefix "${prefix}" must not contain . or .. segments`;
  if (RESERVED_EXACT.includes(prefix)) return `prefix "${prefix}" is reserved`;
  const builtin = reservedTrees(reserved).find((reserved) => prefix === reserved || prefix.startsWith(`${reserved}/`));
  return builtin ? `prefix "${prefix}" lies under the built-in prefix ${builtin}` : undefined;
}
