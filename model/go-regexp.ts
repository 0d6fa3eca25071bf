/**
 * The syntax errors of Go's regexp.Compile (RE2, Perl flags), which Traefik uses for every regex of
 * a middleware and for the TCP HostSNIRegexp matcher. A pattern Go cannot parse makes Traefik
 * disable the middleware or router, and every router using it (Traefik 3.7.15: `error parsing
 * regexp: invalid or unsupported Perl syntax: \`(?=\``). This follows regexp/syntax's parser for the
 * errors it reports; where it is unsure it accepts: a false refusal would block a value Traefik takes.
 */

const POSIX = new Set([
  'alnum',
  'alpha',
  'ascii',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'word',
  'xdigit',
]);
const CAPTURE_NAME = /^[A-Za-z0-9_]+$/;
const REPEAT = /^\{([0-9]+)(,([0-9]*))?\}/;
const INT = /^(0|[1-9][0-9]*)$/;

class GoSyntaxError extends Error {}
const fail = (code: string, expr: string): never => {
  throw new GoSyntaxError(`${code}: \`${expr.length > 60 ? `${expr.slice(0, 60)}…` : expr}\``);
};

/** Go's error for `pattern` (`invalid escape sequence: \`\\k\``), or null when Go compiles it. */
export function goRegexpError(pattern: string): string | null {
  try {
    parse(pattern);
    return null;
  } catch (error) {
    if (error instanceof GoSyntaxError) return error.message;
    throw error;
  }
}

/** `\p{Greek}`, `\pL`, `\p{^L}`: a Unicode class name Go knows (JS's tables stand in for Go's). */
function unicodeClass(name: string): boolean {
  const bare = name.startsWith('^') ? name.slice(1) : name;
  if (bare === 'Any') return true;
  for (const form of [bare, `Script=${bare}`])
    try {
      new RegExp(`\\p{${form}}`, 'u');
      return true;
    } catch {
      // not this form
    }
  return false;
}

/**
 * One escape at `s[i] === '\\'` outside `\Q…\E`; returns the index after it and the literal code
 * point (or -1 for a class such as `\d`). `inClass`: inside `[…]`, where `\A`, `\b`… are invalid.
 */
function escape(s: string, i: number, inClass: boolean): [number, number] {
  const c = s[i + 1];
  if (c === undefined) fail('trailing backslash at end of expression', '');
  if (!/[A-Za-z0-9]/.test(c)) return [i + 2, c.codePointAt(0)!];
  if (!inClass && 'AbBz'.includes(c)) return [i + 2, -1];
  if ('dDsSwW'.includes(c)) return [i + 2, -1];
  if (c === 'p' || c === 'P') {
    if (s[i + 2] === '{') {
      const end = s.indexOf('}', i + 3);
      if (end < 0 || !unicodeClass(s.slice(i + 3, end)))
        fail('invalid character class range', s.slice(i, end < 0 ? undefined : end + 1));
      return [end + 1, -1];
    }
    const name = s[i + 2];
    if (name === undefined || !unicodeClass(name)) fail('invalid character class range', s.slice(i, i + 3));
    return [i + 3, -1];
  }
  if (c >= '1' && c <= '7' && !/[0-7]/.test(s[i + 2] ?? '')) fail('invalid escape sequence', s.slice(i, i + 2));
  if (c >= '0' && c <= '7') {
    let j = i + 2;
    while (j < i + 4 && /[0-7]/.test(s[j] ?? '')) j++;
    return [j, parseInt(s.slice(i + 1, j), 8)];
  }
  if (c === 'x') {
    if (s[i + 2] === '{') {
      const end = s.indexOf('}', i + 3);
      const hex = end < 0 ? '' : s.slice(i + 3, end);
      if (!/^[0-9A-Fa-f]{1,8}$/.test(hex) || parseInt(hex, 16) > 0x10ffff)
        fail('invalid escape sequence', s.slice(i, end < 0 ? undefined : end + 1));
      return [end + 1, parseInt(hex, 16)];
    }
    const hex = s.slice(i + 2, i + 4);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) fail('invalid escape sequence', s.slice(i, i + 4));
    return [i + 4, parseInt(hex, 16)];
  }
  const simple: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
  if (c in simple) return [i + 2, simple[c]];
  return fail('invalid escape sequence', s.slice(i, i + 2));
}

/** `[…]` starting at `s[start] === '['`; returns the index after `]`. */
function charClass(s: string, start: number): number {
  let i = start + 1;
  if (s[i] === '^') i++;
  let first = true;
  while (first || s[i] !== ']') {
    if (i >= s.length) fail('missing closing ]', s.slice(start));
    first = false;
    if (s.startsWith('[:', i)) {
      const end = s.indexOf(':]', i + 2);
      if (end >= 0) {
        const name = s.slice(i + 2, end).replace(/^\^/, '');
        if (!POSIX.has(name)) fail('invalid character class range', s.slice(i, end + 2));
        i = end + 2;
        continue;
      }
    }
    const begin = i;
    let lo: number;
    [i, lo] = classChar(s, i);
    if (lo < 0) continue; // \d, \pL…: a class, not a range end
    if (s[i] === '-' && s[i + 1] !== ']' && i + 1 < s.length) {
      let hi: number;
      [i, hi] = classChar(s, i + 1);
      if (hi < 0) fail('invalid escape sequence', s.slice(i - 2, i));
      if (hi < lo) fail('invalid character class range', s.slice(begin, i));
    }
  }
  return i + 1;
}

function classChar(s: string, i: number): [number, number] {
  if (s[i] === '\\') return escape(s, i, true);
  const cp = s.codePointAt(i)!;
  return [i + (cp > 0xffff ? 2 : 1), cp];
}

function parse(s: string): void {
  let depth = 0;
  /** Whether a repetition has something to repeat here; whether the last item was a repetition. */
  let operand = false;
  let repeated = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '(') {
      if (s[i + 1] === '?') {
        const t = s.slice(i);
        if (t.startsWith('(?P<') || t.startsWith('(?<')) {
          const open = t.indexOf('<');
          const end = t.indexOf('>');
          if (end < 0 || !CAPTURE_NAME.test(t.slice(open + 1, end)))
            fail('invalid named capture', end < 0 ? t : t.slice(0, end + 1));
          i += end + 1;
        } else {
          // flags: (?i) (?i-s) (?i:…); anything else (look-around, (?>, (?P=, (?x) is not RE2
          let j = 2;
          let sign = 1;
          let sawFlag = false;
          for (;;) {
            const f = t[j];
            if (f === undefined) fail('missing closing )', t);
            if ('imsU'.includes(f)) sawFlag = true;
            else if (f === '-' && sign > 0) {
              sign = -1;
              sawFlag = false;
            } else if ((f === ':' || f === ')') && (sign > 0 || sawFlag)) break;
            else fail('invalid or unsupported Perl syntax', t.slice(0, j + 1));
            j++;
          }
          i += j + 1;
          if (t[j] === ')') continue; // flags only: no group, the operand state stays
        }
      } else i++;
      depth++;
      operand = false;
      repeated = '';
      continue;
    }
    if (c === ')') {
      if (depth === 0) fail('unexpected )', s.slice(0, i + 1));
      depth--;
      i++;
      operand = true;
      repeated = '';
      continue;
    }
    if (c === '|') {
      i++;
      operand = false;
      repeated = '';
      continue;
    }
    const brace = c === '{' ? REPEAT.exec(s.slice(i)) : null;
    const counted =
      brace !== null && INT.test(brace[1]) && (brace[3] === undefined || brace[3] === '' || INT.test(brace[3]));
    if (c === '*' || c === '+' || c === '?' || counted) {
      const op = counted ? brace![0] : c;
      if (repeated) fail('invalid nested repetition operator', repeated + op);
      if (!operand) fail('missing argument to repetition operator', op);
      if (counted) {
        const min = Number(brace![1]);
        const max = brace![3] === undefined ? min : brace![3] === '' ? -1 : Number(brace![3]);
        if (min > 1000 || max > 1000 || (max >= 0 && max < min)) fail('invalid repeat count', op);
      }
      i += op.length;
      if (s[i] === '?') i++; // lazy
      repeated = op;
      continue;
    }
    repeated = '';
    operand = true;
    if (c === '[') i = charClass(s, i);
    else if (c === '\\' && s[i + 1] === 'Q') {
      const end = s.indexOf('\\E', i + 2);
      i = end < 0 ? s.length : end + 2;
    } else if (c === '\\') [i] = escape(s, i, false);
    else i += (s.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
  }
  if (depth > 0) fail('missing closing )', s);
}
