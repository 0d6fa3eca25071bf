/**
 * A resource's `tcp.sni_rule` as Traefik 3.7.15 parses a TCP router rule (v3 syntax): Go's
 * parser.ParseExpr and vulcand/predicate (model/go-predicate.ts) with Traefik's pkg/rules
 * definitions — the matchers HostSNI, HostSNIRegexp, ClientIP and ALPN, each also by its lower-case,
 * upper-case and title-case name (`hostsni`, `HOSTSNI`, `Hostsni`; `hostSNI` is an unsupported
 * function), taking strings; `&&`, `||`, `!` over them and parentheses. A rule it cannot parse or
 * build disables the TCP router (`invalid rule: "garbage" , garbage is not defined`, `error while
 * adding rule HostSNI(\`a b\`): invalid value for HostSNI matcher, "a b" is not a valid hostname`);
 * each check below was measured on the binary.
 */
import { goIpOrCidr } from './go-ip.ts';
import { goRegexpError } from './go-regexp.ts';
import { parsePredicate, reflectCall, type GoValue, type PredicateDef } from './go-predicate.ts';

class RuleError extends Error {}
const fail = (message: string): never => {
  throw new RuleError(message);
};

const MATCHERS = ['HostSNI', 'HostSNIRegexp', 'ClientIP', 'ALPN'];
const TREE = 'rules.TreeBuilder';
/** pkg/rules NewParser: each matcher under its name, strings.ToLower, ToUpper and Title(ToLower) */
const NAMES = new Map(
  MATCHERS.flatMap((name) => {
    const lower = name.toLowerCase();
    return [name, lower, name.toUpperCase(), lower[0].toUpperCase() + lower.slice(1)].map((n) => [n, name] as const);
  }),
);
/** andFunc/orFunc(left, right TreeBuilder), notFunc(elem TreeBuilder) */
const tree =
  (count: number) =>
  (args: GoValue[]): GoValue => {
    reflectCall(args, Array(count).fill(TREE));
    return { type: TREE };
  };

/** Checks one matcher call's arguments as Traefik's TCP muxer does. */
function matcher(name: string, args: string[]): void {
  const canonical = NAMES.get(name)!;
  if (args.length === 0) fail(`no args for matcher ${canonical}`);
  if (args.some((a) => a === '')) fail(`empty args for matcher ${canonical}`);
  if (args.length !== 1) fail(`unexpected number of parameters; got ${args.length}, expected 1`);
  const [value] = args;
  if (canonical === 'HostSNI' && value !== '*' && !/^[A-Za-z0-9_.:-]+$/.test(value.replace(/^\*\./, '')))
    fail(`invalid value for HostSNI matcher, ${JSON.stringify(value)} is not a valid hostname`);
  if (canonical === 'HostSNIRegexp') {
    const error = goRegexpError(value);
    if (error) fail(`compiling HostSNIRegexp matcher: error parsing regexp: ${error}`);
  }
  if (canonical === 'ClientIP' && !goIpOrCidr(value))
    fail(`initializing IP checker for ClientIP matcher: invalid CIDR address: ${value}`);
  if (canonical === 'ALPN' && value === 'acme-tls/1')
    fail(`invalid protocol value for ALPN matcher, "acme-tls/1" is not allowed`);
}

/** Traefik's complaint about a TCP router rule, or null when Traefik 3.7.15 builds it. */
export function tcpRuleError(rule: string): string | null {
  // the matcher calls in the order Traefik's addRule checks them (left to right; `!` keeps it)
  const calls: Array<[string, string[]]> = [];
  const matcherCall = (name: string) => (args: GoValue[]) => {
    reflectCall(args, ['string'], true); // func(value ...string) TreeBuilder
    calls.push([name, args.map((arg) => arg.value as string)]);
    return { type: TREE };
  };
  const definition: PredicateDef = {
    functions: Object.fromEntries([...NAMES.keys()].map((name) => [name, matcherCall(name)])),
    operators: { '&&': tree(2), '||': tree(2), '!': tree(1) },
  };
  const parsed = parsePredicate(definition, rule);
  if ('error' in parsed) return parsed.error;
  if (parsed.value.type !== TREE) return `error while parsing rule ${rule}`;
  try {
    for (const [name, args] of calls) matcher(name, args);
    return null;
  } catch (error) {
    if (error instanceof RuleError) return error.message;
    throw error;
  }
}
