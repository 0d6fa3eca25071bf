/**
 * Go's `parser.ParseExpr` for the expressions Traefik hands to github.com/vulcand/predicate (the
 * buffering `retryExpression`): Go's scanner (identifiers, number, rune and string literals with
 * their errors, comments, the semicolon Go inserts at a newline) and its expression grammar
 * (unary and binary operators by Go precedence, parentheses, selectors, index, calls, composite
 * literals). Errors carry Go's text and `line:column` (byte columns), as Traefik 3.7.15 reports
 * them: `1:11: expected operand, found '<'`, then ` (and N more errors)` as Go's parser recovers
 * and goes on. Go types and function literals (`[`, `func`, `map`, `struct`, `chan`, `interface`
 * as an operand) and malformed index expressions stop with a message of ours where Go's differs.
 */

/** A node of Go's go/ast, by its type name (`BinaryExpr` is `*ast.BinaryExpr`). */
export type GoExpr =
  | { kind: 'BasicLit'; literal: 'INT' | 'FLOAT' | 'IMAG' | 'CHAR' | 'STRING'; value: string }
  | { kind: 'Ident'; name: string }
  | { kind: 'BinaryExpr'; op: string; x: GoExpr; y: GoExpr }
  | { kind: 'UnaryExpr'; op: string; x: GoExpr }
  | { kind: 'ParenExpr'; x: GoExpr }
  | { kind: 'SelectorExpr'; x: GoExpr; sel: string }
  | { kind: 'CallExpr'; fun: GoExpr; args: GoExpr[] }
  | { kind: 'IndexExpr'; x: GoExpr; index: GoExpr }
  | { kind: 'StarExpr' | 'CompositeLit' | 'SliceExpr' | 'IndexListExpr' | 'TypeAssertExpr' | 'BadExpr' };

interface Token {
  /** `IDENT`, `INT`, `FLOAT`, `IMAG`, `CHAR`, `STRING`, `SEMICOLON`, `EOF`, `ILLEGAL`, an operator or a keyword */
  tok: string;
  lit: string;
  offset: number;
}

const LITERALS = new Set(['IDENT', 'INT', 'FLOAT', 'IMAG', 'CHAR', 'STRING']);
const KEYWORDS = new Set(
  'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var'.split(
    ' ',
  ),
);
/** Longest first, as Go's scanner reads them. */
const OPERATORS = [
  '<<=', '>>=', '&^=', '...', '&&', '||', '<-', '++', '--', '==', '!=', '<=', '>=', ':=', '+=', '-=', '*=', '/=',
  '%=', '&=', '|=', '^=', '<<', '>>', '&^', '+', '-', '*', '/', '%', '&', '|', '^', '<', '>', '=', '!', '~', '(',
  ')', '[', ']', '{', '}', ',', ';', '.', ':',
]; // prettier-ignore
const PRECEDENCE: Record<string, number> = {
  '||': 1, '&&': 2, '==': 3, '!=': 3, '<': 3, '<=': 3, '>': 3, '>=': 3, '+': 4, '-': 4, '|': 4, '^': 4,
  '*': 5, '/': 5, '%': 5, '<<': 5, '>>': 5, '&': 5, '&^': 5,
}; // prettier-ignore
const UNARY = new Set(['+', '-', '!', '^', '&', '~', '<-']);
const STATEMENT_START = new Set(
  'break const continue defer fallthrough for go goto if return select switch type var'.split(' '),
);
/** Operands that start a Go type or a function literal. */
const TYPE_START = new Set(['[', 'func', 'map', 'struct', 'chan', 'interface']);

const isLetter = (c: string) => /[A-Za-z_]/.test(c) || (c >= '\x80' && /\p{L}/u.test(c));
const isDigit = (c: string) => /[0-9]/.test(c) || (c >= '\x80' && /\p{Nd}/u.test(c));
const isHex = (c: string) => /[0-9A-Fa-f]/.test(c);
const isPrint = (c: string) => c === ' ' || /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(c);
/** Go's `%#U`: `U+0040 '@'`, or `U+000B` for a character it does not print. */
const codePoint = (c: string) =>
  `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}${isPrint(c) ? ` '${c}'` : ''}`;

class Stop extends Error {}

/** Go's scanner over `src` (go/scanner), one token at a time; errors go to `report`. */
class Scanner {
  private at = 0;
  private insertSemi = false;
  constructor(
    private readonly src: string,
    private readonly report: (offset: number, message: string) => void,
  ) {
    if (src.startsWith('\ufeff')) this.at = 1; // Go skips a byte order mark at the start
  }

  private ch(at = this.at): string {
    return at < this.src.length ? String.fromCodePoint(this.src.codePointAt(at)!) : '';
  }
  private advance(): void {
    const c = this.ch();
    if (c === '\0') this.report(this.at, 'illegal character NUL');
    if (c === '\ufeff' && this.at > 0) this.report(this.at, 'illegal byte order mark');
    this.at += c.length;
  }
  /** digits of `base` and '_'; returns bit 0 when a digit was read, bit 1 for a '_' */
  private digits(base: number, invalid: { at: number }): number {
    let seen = 0;
    for (;;) {
      const c = this.ch();
      if (c === '_') seen |= 2;
      else if (base <= 10 ? /[0-9]/.test(c) : isHex(c)) {
        seen |= 1;
        if (base < 10 && Number(c) >= base && invalid.at < 0) invalid.at = this.at;
      } else return seen;
      this.advance();
    }
  }

  private number(): Token {
    const start = this.at;
    let tok = 'ILLEGAL';
    let base = 10;
    let prefix = '';
    let seen = 0;
    const invalid = { at: -1 };
    const name = () =>
      ({ x: 'hexadecimal literal', o: 'octal literal', '0': 'octal literal', b: 'binary literal' })[prefix] ??
      'decimal literal';
    if (this.ch() !== '.') {
      tok = 'INT';
      if (this.ch() === '0') {
        this.advance();
        const p = this.ch().toLowerCase();
        if (p === 'x' || p === 'o' || p === 'b') {
          this.advance();
          [base, prefix] = [{ x: 16, o: 8, b: 2 }[p], p];
        } else [base, prefix, seen] = [8, '0', 1];
      }
      seen |= this.digits(base, invalid);
    }
    if (this.ch() === '.') {
      tok = 'FLOAT';
      if (prefix === 'o' || prefix === 'b') this.report(this.at, `invalid radix point in ${name()}`);
      this.advance();
      seen |= this.digits(base, invalid);
    }
    if ((seen & 1) === 0) this.report(this.at, `${name()} has no digits`);
    const e = this.ch().toLowerCase();
    if (e === 'e' || e === 'p') {
      if (e === 'e' && prefix !== '' && prefix !== '0')
        this.report(this.at, `'${this.ch()}' exponent requires decimal mantissa`);
      if (e === 'p' && prefix !== 'x') this.report(this.at, `'${this.ch()}' exponent requires hexadecimal mantissa`);
      this.advance();
      tok = 'FLOAT';
      if (this.ch() === '+' || this.ch() === '-') this.advance();
      const exponent = this.digits(10, { at: -1 });
      seen |= exponent;
      if ((exponent & 1) === 0) this.report(this.at, 'exponent has no digits');
    } else if (prefix === 'x' && tok === 'FLOAT') this.report(this.at, "hexadecimal mantissa requires a 'p' exponent");
    if (this.ch() === 'i') {
      tok = 'IMAG';
      this.advance();
    }
    const lit = this.src.slice(start, this.at);
    if (tok === 'INT' && invalid.at >= 0)
      this.report(invalid.at, `invalid digit '${this.src[invalid.at]}' in ${name()}`);
    if (seen & 2) {
      const at = invalidSeparator(lit);
      if (at >= 0) this.report(start + at, "'_' must separate successive digits");
    }
    return { tok, lit, offset: start };
  }

  /** An escape after `\`; false (reported) when Go refuses it. */
  private escape(quote: string): boolean {
    const start = this.at;
    const c = this.ch();
    if ((c !== '' && 'abfnrtv\\'.includes(c)) || c === quote) {
      this.advance();
      return true;
    }
    const hex = c === 'x' || c === 'u' || c === 'U';
    if (!hex && !/[0-7]/.test(c)) {
      this.report(start, c === '' ? 'escape sequence not terminated' : 'unknown escape sequence');
      return false;
    }
    if (hex) this.advance();
    // \NNN octal, \xHH, \uHHHH, \UHHHHHHHH
    let count = hex ? { x: 2, u: 4, U: 8 }[c]! : 3;
    const base = hex ? 16 : 8;
    const max = c === 'u' || c === 'U' ? 0x10ffff : 255;
    let value = 0;
    for (; count > 0; count--) {
      const d = this.ch();
      const digit = isHex(d) ? parseInt(d, 16) : 99;
      if (digit >= base) {
        this.report(
          this.at,
          d === '' ? 'escape sequence not terminated' : `illegal character ${codePoint(d)} in escape sequence`,
        );
        return false;
      }
      value = value * base + digit;
      this.advance();
    }
    if (value > max || (value >= 0xd800 && value < 0xe000)) {
      this.report(start, 'escape sequence is invalid Unicode code point');
      return false;
    }
    return true;
  }

  private quoted(quote: string): string {
    const start = this.at - 1;
    let valid = true;
    let count = 0;
    for (;;) {
      const c = this.ch();
      if (c === '' || (c === '\n' && quote !== '`')) {
        const what = { "'": 'rune literal', '"': 'string literal', '`': 'raw string literal' }[quote];
        if (valid) this.report(start, `${what} not terminated`);
        valid = false;
        break;
      }
      this.advance();
      if (c === quote) break;
      count++;
      if (c === '\\' && quote !== '`' && !this.escape(quote)) valid = false;
    }
    if (quote === "'" && valid && count !== 1) this.report(start, 'illegal rune literal');
    return this.src.slice(start, this.at);
  }

  next(): Token {
    for (;;) {
      const c = this.ch();
      if (c === ' ' || c === '\t' || c === '\r' || (c === '\n' && !this.insertSemi)) this.advance();
      else break;
    }
    const offset = this.at;
    const c = this.ch();
    const semi = this.insertSemi;
    this.insertSemi = false;
    if (c === '') return semi ? { tok: 'SEMICOLON', lit: '\n', offset } : { tok: 'EOF', lit: '', offset };
    if (c === '\n') {
      this.advance();
      return { tok: 'SEMICOLON', lit: '\n', offset };
    }
    if (isLetter(c)) {
      while (isLetter(this.ch()) || isDigit(this.ch())) this.advance();
      const lit = this.src.slice(offset, this.at);
      if (!KEYWORDS.has(lit)) {
        this.insertSemi = true;
        return { tok: 'IDENT', lit, offset };
      }
      this.insertSemi = ['break', 'continue', 'fallthrough', 'return'].includes(lit);
      return { tok: lit, lit, offset };
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(this.ch(this.at + 1)))) {
      this.insertSemi = true;
      return this.number();
    }
    if (c === '"' || c === "'" || c === '`') {
      this.advance();
      this.insertSemi = true;
      return { tok: { '"': 'STRING', "'": 'CHAR', '`': 'STRING' }[c], lit: this.quoted(c), offset };
    }
    if (this.src.startsWith('//', offset) || this.src.startsWith('/*', offset)) {
      const line = this.src.startsWith('//', offset);
      const end = line ? this.src.indexOf('\n', offset) : this.src.indexOf('*/', offset + 2);
      const stop = end < 0 ? this.src.length : line ? end : end + 2;
      if (!line && end < 0) this.report(offset, 'comment not terminated');
      while (this.at < stop) this.advance();
      const newline = this.src.indexOf('\n', offset);
      // a /*…*/ holding a newline ends the line like one: Go's semicolon at that newline
      if (semi && !line && newline >= 0 && newline < stop) return { tok: 'SEMICOLON', lit: '\n', offset: newline };
      this.insertSemi = semi;
      return this.next();
    }
    const op = OPERATORS.find((o) => this.src.startsWith(o, offset));
    if (op) {
      this.at += op.length;
      this.insertSemi = [')', ']', '}', '++', '--'].includes(op);
      return { tok: op, lit: '', offset };
    }
    if (c === '\ufeff')
      this.advance(); // advance() reports it
    else {
      this.report(offset, `illegal character ${codePoint(c)}`);
      this.at += c.length;
    }
    this.insertSemi = semi;
    return { tok: 'ILLEGAL', lit: c, offset };
  }
}

/** go/scanner's invalidSep: the index of a '_' that does not separate digits, or -1. */
function invalidSeparator(literal: string): number {
  let hex = false;
  let previous = '.';
  let i = 0;
  if (literal.length >= 2 && literal[0] === '0' && /[xXoObB]/.test(literal[1])) {
    hex = /[xX]/.test(literal[1]);
    previous = '0';
    i = 2;
  }
  for (; i < literal.length; i++) {
    const c = literal[i];
    if (c === '_') {
      if (previous !== '0') return i;
      previous = '_';
    } else if (/[0-9]/.test(c) || (hex && isHex(c))) previous = '0';
    else {
      if (previous === '_') return i - 1;
      previous = '.';
    }
  }
  return previous === '_' ? literal.length - 1 : -1;
}

/**
 * A computation that may need another one first, without recursion: Go reads expressions nested
 * 100000 levels deep (its stack grows), far deeper than this process's stack (20000 parentheses
 * overflowed it). `later(first, then)` runs `first`, then `then` with its value; settle() runs the
 * chain with a stack of its own. The parser and every walk over a GoExpr go through it.
 */
export type Deep<T> = T | Later<T>;
class Later<T> {
  constructor(
    readonly first: () => Deep<T>,
    readonly then: (value: T) => Deep<T>,
  ) {}
}
export const later = <T>(first: () => Deep<T>, then: (value: T) => Deep<T>): Deep<T> => new Later(first, then);

/** The value of `step`, each `later` run in turn on an explicit stack. */
export function settle<T>(step: Deep<T>): T {
  const pending: Array<(value: T) => Deep<T>> = [];
  for (;;) {
    if (step instanceof Later) {
      pending.push(step.then);
      step = step.first();
    } else {
      const then = pending.pop();
      if (!then) return step;
      step = then(step);
    }
  }
}

/** `one` of each of `items` in turn, then `done` with their values. */
export function each<I, T>(items: I[], one: (item: I) => Deep<T>, done: (values: T[]) => Deep<T>): Deep<T> {
  const values: T[] = [];
  const step = (): Deep<T> =>
    values.length === items.length
      ? done(values)
      : later(
          () => one(items[values.length]),
          (value) => {
            values.push(value);
            return step();
          },
        );
  return step();
}

/** go/parser's maxNestLev: deeper, ParseExpr fails with `exceeded max nesting depth`. */
export const GO_MAX_NESTING = 100_000;

/** The expression of `src` as Go's parser.ParseExpr reads it, or Go's first error. */
export function parseGoExpression(src: string): { expr: GoExpr } | { error: string } {
  const errors: Array<{ offset: number; line: number; message: string }> = [];
  // Go's lines start after each '\n' that is not the last byte: the end of `a\n` is on line 1
  const newlines: number[] = [];
  for (let at = src.indexOf('\n'); at >= 0 && at < src.length - 1; at = src.indexOf('\n', at + 1)) newlines.push(at);
  /** How many line-starting newlines stand before `offset` (binary search: errors may come by the thousand). */
  const newlinesBefore = (offset: number) => {
    let [low, high] = [0, newlines.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (newlines[middle] < offset) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const lineStart = (offset: number) => {
    const count = newlinesBefore(offset);
    return count === 0 ? 0 : newlines[count - 1] + 1;
  };
  const lineOf = (offset: number) => newlinesBefore(offset) + 1;
  const report = (offset: number, message: string) => errors.push({ offset, line: lineOf(offset), message });
  const scanner = new Scanner(src, report);
  let token = scanner.next();
  const next = () => {
    token = scanner.next();
  };
  /**
   * Go's parser.error: an error on the line of the last one is dropped, parsing stops after 10;
   * otherwise parsing goes on as Go's does, so the count of errors matches.
   */
  const error = (offset: number, message: string) => {
    const last = errors.at(-1);
    if (last && last.line === lineOf(offset)) return;
    if (errors.length > 10) throw new Stop();
    report(offset, message);
  };
  /** An error where Go's recovery is not followed: report, and stop parsing. */
  const stop = (offset: number, message: string): never => {
    error(offset, message);
    throw new Stop();
  };
  /**
   * Go's nestLev, counted where go/parser counts it (each unary expression; each round of the
   * binary and primary expression loops; tryIdentOrType): past GO_MAX_NESTING Go gives up.
   */
  let level = 0;
  const nest = () => {
    if (++level > GO_MAX_NESTING) stop(token.offset, 'exceeded max nesting depth');
  };
  const found = () =>
    token.tok === 'SEMICOLON' && token.lit === '\n'
      ? 'newline'
      : LITERALS.has(token.tok)
        ? token.lit
        : `'${token.tok === 'SEMICOLON' ? ';' : token.tok}'`;
  const expected = (what: string) => error(token.offset, `expected ${what}, found ${found()}`);
  const expect = (tok: string) => {
    if (token.tok !== tok) expected(`'${tok}'`);
    next(); // Go moves on either way
  };
  const newline = () => token.tok === 'SEMICOLON' && token.lit === '\n';
  /** Go's advance(stmtStart) after a missing operand: skip to a statement keyword or the end. */
  const skipToStatement = () => {
    while (token.tok !== 'EOF' && !STATEMENT_START.has(token.tok)) next();
  };
  /** Skips a balanced `{…}` (a composite literal's elements are never a predicate). */
  const skipBraces = () => {
    let depth = 0;
    do {
      if (token.tok === 'EOF') stop(token.offset, `expected '}', found ${found()}`);
      if (token.tok === '{') depth++;
      if (token.tok === '}') depth--;
      next();
    } while (depth > 0);
  };
  const full = () => expression(1);

  const operand = (): Deep<GoExpr> => {
    const { tok, lit } = token;
    if (tok === 'IDENT') {
      next();
      return { kind: 'Ident', name: lit };
    }
    if (LITERALS.has(tok)) {
      next();
      return { kind: 'BasicLit', literal: tok as 'INT', value: lit };
    }
    if (tok === '(') {
      next();
      return later(full, (x) => {
        expect(')');
        return { kind: 'ParenExpr', x };
      });
    }
    if (tok !== 'func') {
      nest(); // Go's tryIdentOrType
      level--;
    }
    if (TYPE_START.has(tok))
      stop(token.offset, `'${tok}' starts a Go type or function literal, which these expressions cannot use`);
    expected('operand');
    skipToStatement();
    return { kind: 'BadExpr' };
  };

  const index = (x: GoExpr): Deep<GoExpr> => {
    next();
    const parts: GoExpr[] = [];
    let slice = false;
    const more = (): Deep<GoExpr> => {
      while (token.tok !== ']') {
        if (token.tok === ':') {
          slice = true;
          next();
        } else if (token.tok === ',') {
          next();
          // the arguments of a generic instance are types: a literal is Go's error
          const { tok } = token as Token;
          if (LITERALS.has(tok) && tok !== 'IDENT') stop(token.offset, `expected type, found ${found()}`);
        } else
          return later(full, (part) => {
            parts.push(part);
            if (![':', ',', ']'].includes(token.tok)) stop(token.offset, `expected ']', found ${found()}`);
            return more();
          });
      }
      next();
      if (slice) return { kind: 'SliceExpr' };
      return parts.length === 1 ? { kind: 'IndexExpr', x, index: parts[0] } : { kind: 'IndexListExpr' };
    };
    return more();
  };

  const call = (fun: GoExpr): Deep<GoExpr> => {
    next();
    const args: GoExpr[] = [];
    const close = (): GoExpr => {
      if (token.tok !== ')' && newline()) {
        error(token.offset, "missing ',' before newline in argument list");
        next();
      }
      expect(')');
      return { kind: 'CallExpr', fun, args };
    };
    const more = (): Deep<GoExpr> => {
      if (token.tok === ')' || token.tok === 'EOF') return close();
      return later(full, (arg) => {
        args.push(arg);
        let ellipsis = false;
        if (token.tok === '...') {
          ellipsis = true;
          next();
        }
        if (token.tok === ')') return close();
        // Go "inserts" the missing comma and goes on past the token
        if (token.tok !== ',') error(token.offset, `missing ','${newline() ? ' before newline' : ''} in argument list`);
        next();
        return ellipsis ? close() : more();
      });
    };
    return more();
  };

  /** After `.`: a selector `x.name`, a type assertion `x.(T)`, or Go's error. */
  const selector = (x: GoExpr): Deep<GoExpr> => {
    next();
    const { tok, lit } = token;
    if (tok === 'IDENT') {
      next();
      return { kind: 'SelectorExpr', x, sel: lit };
    }
    if (tok === '(') {
      next();
      const close = (): GoExpr => {
        expect(')');
        return { kind: 'TypeAssertExpr' };
      };
      if (token.tok !== 'type') return later(full, close);
      next();
      return close();
    }
    expected('selector or type assertion');
    if (tok !== '}') next();
    return { kind: 'SelectorExpr', x, sel: '_' };
  };

  /** Go's parsePrimaryExpr loop after the operand; `rounds` is its count of nesting levels. */
  const primary = (x: GoExpr, rounds: number): Deep<GoExpr> => {
    nest();
    const again = (y: GoExpr) => primary(y, rounds + 1);
    if (token.tok === '.') return later(() => selector(x), again);
    if (token.tok === '[') return later(() => index(x), again);
    if (token.tok === '(') return later(() => call(x), again);
    if (token.tok === '{' && (x.kind === 'Ident' || (x.kind === 'SelectorExpr' && x.x.kind === 'Ident'))) {
      skipBraces();
      return again({ kind: 'CompositeLit' });
    }
    level -= rounds + 1;
    return x;
  };

  const unary = (): Deep<GoExpr> => {
    nest();
    const op = token.tok;
    const leave = (x: GoExpr) => {
      level--;
      return x;
    };
    if (UNARY.has(op)) {
      next();
      return later(unary, (x) => leave({ kind: 'UnaryExpr', op, x }));
    }
    if (op === '*') {
      next();
      return later(unary, () => leave({ kind: 'StarExpr' }));
    }
    return later(() => later(operand, (x) => primary(x, 0)), leave);
  };

  /** Go's parseBinaryExpr: the operand, then each operator of `lowest` precedence or more. */
  function expression(lowest: number): Deep<GoExpr> {
    const loop = (x: GoExpr, rounds: number): Deep<GoExpr> => {
      nest();
      // in an expression Go reads `=` as a mistyped `==`: the error, then `==`
      const op = token.tok === '=' ? '==' : token.tok;
      const precedence = PRECEDENCE[op] ?? 0;
      if (precedence < lowest) {
        level -= rounds + 1;
        return x;
      }
      expect(op);
      return later(
        () => expression(precedence + 1),
        (y) => loop({ kind: 'BinaryExpr', op, x, y }, rounds + 1),
      );
    };
    return later(unary, (x) => loop(x, 0));
  }

  let expr: GoExpr | null = null;
  try {
    expr = settle(full());
    if (token.tok === 'SEMICOLON' && token.lit === '\n') next();
    expect('EOF');
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
  }
  if (errors.length === 0 && expr) return { expr };
  // Go's ErrorList: sorted by position then text, the first one and how many more
  const first = [...errors].sort((a, b) => a.offset - b.offset || (a.message < b.message ? -1 : 1))[0];
  const column = Buffer.byteLength(src.slice(lineStart(first.offset), first.offset)) + 1;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more errors)` : '';
  return { error: `${first.line}:${column}: ${first.message}${more}` };
}
