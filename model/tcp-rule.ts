/**
 * A resource's `tcp.sni_rule` as Traefik 3.7.15 parses a TCP router rule (v3 syntax: a Go
 * expression of HostSNI, HostSNIRegexp, ClientIP and ALPN calls joined by `&&`, `||`, `!` and
 * parentheses). A rule it cannot parse or build disables the TCP router (`invalid rule: "garbage" ,
 * garbage is not defined`, `error while adding rule HostSNI(\`a b\`): invalid value for HostSNI
 * matcher, "a b" is not a valid hostname`); each check below was measured on the binary.
 */
import { goIpOrCidr } from './go-ip.ts';
import { goRegexpError } from './go-regexp.ts';

type Token =
  { kind: 'ident'; text: string } | { kind: 'string'; value: string } | { kind: 'op'; text: string } | { kind: 'end' };

class RuleError extends Error {}
const fail = (message: string): never => {
  throw new RuleError(message);
};

const GO_ESCAPE = /^\\(?:[abfnrtv\\"]|x[0-9A-Fa-f]{2}|[0-7]{3}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})/;

const SIMPLE: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** The character a Go escape stands for (`\x41`, `\101`, `\u00e9`, `\n`…). */
function goUnescape(escape: string): string {
  const c = escape[1];
  if (c in SIMPLE) return SIMPLE[c];
  if (c === 'x' || c === 'u' || c === 'U')
    return String.fromCodePoint(Math.min(parseInt(escape.slice(2), 16), 0x10ffff));
  if (/[0-7]/.test(c)) return String.fromCharCode(parseInt(escape.slice(1), 8));
  return c; // \\ and \"
}

/** Go's tokens, with the semicolon Go inserts at a newline after an identifier, a string or `)`. */
function tokens(rule: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const semicolonAfter = () => {
    const last = out.at(-1);
    return (
      last !== undefined &&
      (last.kind === 'ident' || last.kind === 'string' || (last.kind === 'op' && last.text === ')'))
    );
  };
  while (i < rule.length) {
    const c = rule[i];
    if (c === '\n') {
      if (semicolonAfter()) out.push({ kind: 'op', text: ';' });
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') i++;
    else if (/[A-Za-z_]/.test(c)) {
      const [word] = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rule.slice(i))!;
      out.push({ kind: 'ident', text: word });
      i += word.length;
    } else if (c === '`') {
      const end = rule.indexOf('`', i + 1);
      if (end < 0) fail('raw string literal not terminated');
      out.push({ kind: 'string', value: rule.slice(i + 1, end).replaceAll('\r', '') });
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let value = '';
      while (rule[j] !== '"') {
        if (j >= rule.length || rule[j] === '\n') fail('string literal not terminated');
        if (rule[j] === '\\') {
          const escape = GO_ESCAPE.exec(rule.slice(j));
          if (!escape) fail('unknown escape sequence');
          value += goUnescape(escape![0]);
          j += escape![0].length;
        } else value += rule[j++];
      }
      out.push({ kind: 'string', value });
      i = j + 1;
    } else if (rule.startsWith('&&', i) || rule.startsWith('||', i)) {
      out.push({ kind: 'op', text: rule.slice(i, i + 2) });
      i += 2;
    } else if ('()!,'.includes(c)) {
      out.push({ kind: 'op', text: c });
      i++;
    } else fail(`${JSON.stringify(c)} is not supported`);
  }
  if (out.at(-1)?.kind === 'op' && (out.at(-1) as { text: string }).text === ';') out.pop(); // a final newline
  out.push({ kind: 'end' });
  return out;
}

/** Checks one matcher call's arguments as Traefik's TCP muxer does. */
function matcher(name: string, args: string[]): void {
  const canonical = ['HostSNI', 'HostSNIRegexp', 'ClientIP', 'ALPN'].find(
    (m) => m.toLowerCase() === name.toLowerCase(),
  );
  if (!canonical) fail(`unsupported function: ${name}`);
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
  try {
    const list = tokens(rule);
    let at = 0;
    const peek = () => list[at];
    const isOp = (text: string) => {
      const token = peek();
      return token.kind === 'op' && token.text === text;
    };
    const expect = (text: string) => {
      if (!isOp(text)) fail(`expected '${text}'`);
      at++;
    };
    const unary = (): void => {
      if (isOp('!')) {
        at++;
        return unary();
      }
      if (isOp('(')) {
        at++;
        expression();
        return expect(')');
      }
      const token = peek();
      if (token.kind !== 'ident') return fail('expected operand');
      at++;
      if (!isOp('(')) return fail(`${token.text} is not defined`);
      at++;
      const args: string[] = [];
      while (!isOp(')')) {
        const arg = peek();
        if (arg.kind !== 'string') return fail(`arguments of ${token.text} must be strings`);
        args.push(arg.value);
        at++;
        if (isOp(',')) at++;
        else if (!isOp(')')) return fail("missing ',' in argument list");
      }
      at++;
      matcher(token.text, args);
    };
    const expression = (): void => {
      unary();
      while (isOp('&&') || isOp('||')) {
        at++;
        unary();
      }
    };
    expression();
    if (peek().kind !== 'end') fail("expected 'EOF'");
    return null;
  } catch (error) {
    if (error instanceof RuleError) return error.message;
    throw error;
  }
}
