/**
 * Host globs of provider targets (docs/API.md "Provider targets"). Case-insensitive, label-aware:
 * `*` matches any run of characters inside one label (`*.example.com` is `a.example.com`, not
 * `a.b.example.com`; `app-*.example.com` works too), and `**` as a whole label matches one or more
 * labels (`**.example.com` is every subdomain at any depth). Everything else matches itself.
 */

const LABEL = /^(\*\*|[a-z0-9_*-]+)$/;
const MAX_LENGTH = 253;

/** Why `glob` is not a valid host glob, or null when it is. */
export function globProblem(glob: string): string | null {
  if (glob.length === 0) return 'must not be empty';
  if (glob.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`;
  const labels = glob.toLowerCase().split('.');
  for (const label of labels) {
    if (label === '') return `"${glob}" has an empty label (leading, trailing or doubled dot)`;
    if (!LABEL.test(label))
      return `"${glob}" may hold letters, digits, "-", "_" and "*" in each label, and "**" only as a whole label`;
    if (label !== '**' && label.includes('**')) return `"${glob}": "**" must be a whole label`;
  }
  return null;
}

const compiled = new Map<string, RegExp>();

/** The glob as an anchored regular expression (cached: targets are few, hosts many). */
function regexOf(glob: string): RegExp {
  let re = compiled.get(glob);
  if (!re) {
    const source = glob
      .toLowerCase()
      .split('.')
      .map((label) =>
        label === '**'
          ? '[^.]+(?:\\.[^.]+)*'
          : // a label holds only [a-z0-9_*-] (globProblem): nothing to escape
            label.replaceAll('*', '[^.]*'),
      )
      .join('\\.');
    re = new RegExp(`^${source}$`);
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(glob, re);
  }
  return re;
}

/** Whether `host` matches one of `globs` (host names compare case-insensitively, a trailing dot ignored). */
export function hostMatches(host: string, globs: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return globs.some((glob) => regexOf(glob).test(name));
}

const MATCHER = /\b(Host|HostSNI)\s*\(([^)]*)\)/g;
const QUOTED = /[`"']([^`"']*)[`"']/g;

/**
 * Host names a router rule matches with `Host(...)` or `HostSNI(...)` (v2 syntax with several
 * names included). `HostSNI(\`*\`)` (any name) and `HostRegexp` give no name: such routers are
 * selected by resource id or by a target without `include`, never by a host glob.
 */
export function ruleHosts(rule: unknown): string[] {
  if (typeof rule !== 'string') return [];
  const hosts: string[] = [];
  for (const matcher of rule.matchAll(MATCHER)) {
    for (const quoted of matcher[2].matchAll(QUOTED)) {
      if (quoted[1] !== '' && quoted[1] !== '*') hosts.push(quoted[1]);
    }
  }
  return hosts;
}
