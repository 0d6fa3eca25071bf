/**
 * The fields the stats read from one JSON access-log line, without JSON.parse (issue 11): a Traefik
 * line has ~35 keys and ~1 KB, and JSON.parse builds all of them (strings, an object with a
 * dictionary-mode shape) only for eleven to be read. This walks the line's bytes once (an ASCII
 * line: byte offsets are string offsets), validates every token the way JSON.parse does, and keeps
 * only the values of the wanted keys (fieldValues), the counted text fields and the instants as byte
 * ranges of the line.
 *
 * It returns `null` for a line JSON.parse would reject and `undefined` when the line is valid but
 * unusual (a nested value, an escaped key): the caller then uses JSON.parse, so the result is always
 * the one JSON.parse gives. test/logs/access-log-parse.test.ts compares both on real and odd lines.
 */

/** The wanted keys of a JSON line, as JSON.parse's object has them (access-log-parse.ts reads them). */

export interface JsonFields {
  ClientHost?: unknown;
  DownstreamContentSize?: unknown;
  DownstreamStatus?: unknown;
  Duration?: unknown;
  RequestHost?: unknown;
  RequestMethod?: unknown;
  RequestPath?: unknown;
  RouterName?: unknown;
  ServiceName?: unknown;
  StartUTC?: unknown;
  time?: unknown;
}

/** The wanted keys' slots in fieldValues, in JsonFields' order. */
const enum Slot {
  ClientHost,
  DownstreamContentSize,
  DownstreamStatus,
  Duration,
  RequestHost,
  RequestMethod,
  RequestPath,
  RouterName,
  ServiceName,
  StartUTC,
  Time,
  None,
}
const values: unknown[] = new Array(Slot.None).fill(undefined);

/**
 * jsonFieldsInto()'s reading: the wanted values by slot (undefined: absent key), and for a text
 * field read as a byte range, SPAN with the range in spanStarts/spanEnds.
 */
export const fieldValues: readonly unknown[] = values;
export const SPAN = Symbol('byte range');
export const spanStarts = new Int32Array(Slot.None);
export const spanEnds = new Int32Array(Slot.None);
/** The slots of fieldValues. */
export const FIELD = {
  ClientHost: Slot.ClientHost,
  DownstreamContentSize: Slot.DownstreamContentSize,
  DownstreamStatus: Slot.DownstreamStatus,
  Duration: Slot.Duration,
  RequestHost: Slot.RequestHost,
  RequestMethod: Slot.RequestMethod,
  RequestPath: Slot.RequestPath,
  RouterName: Slot.RouterName,
  ServiceName: Slot.ServiceName,
  StartUTC: Slot.StartUTC,
  Time: Slot.Time,
} as const;
/** The slots whose string values the stats read from the line's bytes (counted fields, the instants). */
const TEXT_SLOT = new Array<boolean>(Slot.None).fill(false);
for (const slot of [
  Slot.ClientHost,
  Slot.RequestHost,
  Slot.RequestMethod,
  Slot.RequestPath,
  Slot.RouterName,
  Slot.ServiceName,
  Slot.StartUTC,
  Slot.Time,
])
  TEXT_SLOT[slot] = true;

const NAMES: [string, Slot][] = [
  ['ClientHost', Slot.ClientHost],
  ['DownstreamContentSize', Slot.DownstreamContentSize],
  ['DownstreamStatus', Slot.DownstreamStatus],
  ['Duration', Slot.Duration],
  ['RequestHost', Slot.RequestHost],
  ['RequestMethod', Slot.RequestMethod],
  ['RequestPath', Slot.RequestPath],
  ['RouterName', Slot.RouterName],
  ['ServiceName', Slot.ServiceName],
  ['StartUTC', Slot.StartUTC],
  ['time', Slot.Time],
];
/** Wanted keys by length, as bytes: most of a line's ~35 keys are dismissed by a length or first-byte check, and no key is sliced. */
interface Wanted {
  bytes: Uint8Array;
  slot: Slot;
}
const BY_LENGTH: Wanted[][] = [];
for (const [name, slot] of NAMES) (BY_LENGTH[name.length] ??= []).push({ bytes: Buffer.from(name, 'latin1'), slot });
for (let length = 0; length < BY_LENGTH.length; length++) BY_LENGTH[length] ??= [];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** A scan position's sentinel: the line is invalid JSON. */
const INVALID = -1;

export const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

function skipWhitespace(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/** Set by scanString: the string had an escape, so its value needs decoding. */
let escaped = false;

/**
 * The first backslash of the chunk at or after `from`. Strings are read in order, so one search
 * usually answers many: there is no backslash in text[searchedFrom, backslashAt).
 */
let backslashText = '';
let searchedFrom = 0;
let backslashAt = -1;
function nextBackslash(text: string, from: number): number {
  if (text !== backslashText || from < searchedFrom || backslashAt < from) {
    const found = text.indexOf('\\', from);
    backslashText = text;
    searchedFrom = from;
    backslashAt = found < 0 ? text.length : found;
  }
  return backslashAt;
}

/** At an opening quote: the position after the closing one, or INVALID. */
function scanString(b: Uint8Array, text: string, i: number, end: number, controlFree: boolean): number {
  escaped = false;
  if (controlFree) {
    // no control character in the chunk: a string without a backslash ends at the next quote (a builtin search)
    const close = text.indexOf('"', i + 1);
    if (close > i && close < end && nextBackslash(text, i + 1) > close) return close + 1;
  }
  i++;
  for (;;) {
    if (i >= end) return INVALID;
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return INVALID;
    if (c === BACKSLASH) {
      escaped = true;
      const e = b[i + 1];
      if (e === 0x75) {
        // \uXXXX
        if (i + 6 > end || !isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) return INVALID;
        i += 6;
        continue;
      }
      // " \ / b f n r t
      if (
        e !== QUOTE &&
        e !== BACKSLASH &&
        e !== 0x2f &&
        e !== 0x62 &&
        e !== 0x66 &&
        e !== 0x6e &&
        e !== 0x72 &&
        e !== 0x74
      )
        return INVALID;
      i += 2;
      continue;
    }
    i++;
  }
}

/** A JSON number (RFC 8259 grammar) at i: the position after it, or INVALID. */
function scanNumber(b: Uint8Array, i: number, end: number): number {
  if (b[i] === 0x2d) i++;
  const first = i < end ? b[i] : -1;
  if (first === 0x30) i++;
  else if (first >= 0x31 && first <= 0x39) while (i < end && isDigit(b[i])) i++;
  else return INVALID;
  if (i < end && b[i] === 0x2e) {
    i++;
    if (i >= end || !isDigit(b[i])) return INVALID;
    while (i < end && isDigit(b[i])) i++;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    if (i >= end || !isDigit(b[i])) return INVALID;
    while (i < end && isDigit(b[i])) i++;
  }
  return i;
}

/** The value of the number b[start, end) (valid JSON): digits only (most) without a string, else Number(). */
export function numberAt(b: Uint8Array, text: string, start: number, end: number): number {
  if (end - start > 15) return Number(text.slice(start, end));
  let value = 0;
  for (let k = start; k < end; k++) {
    const d = b[k] - 0x30;
    if (d < 0 || d > 9) return Number(text.slice(start, end));
    value = value * 10 + d;
  }
  return value;
}

/** `word` (ASCII) at b[i..]: the position after it, or INVALID. */
function scanWord(b: Uint8Array, i: number, end: number, word: string): number {
  if (i + word.length > end) return INVALID;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return INVALID;
  return i + word.length;
}

/** Which wanted key's slot b[start, end) is, or Slot.None (the key has no escape). */
function wantedSlot(b: Uint8Array, start: number, end: number): Slot {
  const length = end - start;
  if (length >= BY_LENGTH.length) return Slot.None;
  const candidates = BY_LENGTH[length];
  const last = b[end - 1];
  for (let c = 0; c < candidates.length; c++) {
    const name = candidates[c].bytes;
    // most keys of a wanted key's length differ from it in the last byte (ClientPort, ClientHost)
    if (name[length - 1] !== last) continue;
    let k = 0;
    while (k < length && b[start + k] === name[k]) k++;
    if (k === length) return candidates[c].slot;
  }
  return Slot.None;
}

/**
 * The wanted fields of the ASCII line b[start, end) (trimmed, b[start] is `{`; `text` is the same
 * bytes as a string, at the same offsets) into fieldValues: `true`, or `null` when JSON.parse would
 * throw, `undefined` when only JSON.parse can tell (a nested value, an escaped key). `controlFree`: the
 * caller checked that `text` has no control character (controlFree() of its bytes), so a string without
 * a backslash needs no byte-by-byte check. `spans`: a text field's string without escapes is left in
 * the line as a byte range (SPAN) instead of becoming a string.
 */
export function jsonFieldsInto(
  b: Uint8Array,
  text: string,
  start: number,
  end: number,
  controlFree: boolean,
  spans: boolean,
): true | null | undefined {
  values.fill(undefined);
  let i = skipWhitespace(b, start + 1, end);
  if (i < end && b[i] === 0x7d) return skipWhitespace(b, i + 1, end) === end ? true : null;
  for (;;) {
    if (i >= end || b[i] !== QUOTE) return null;
    const keyStart = i + 1;
    i = scanString(b, text, i, end, controlFree);
    if (i === INVALID) return null;
    if (escaped) return undefined;
    const slot = wantedSlot(b, keyStart, i - 1);
    i = skipWhitespace(b, i, end);
    if (i >= end || b[i] !== 0x3a) return null;
    i = skipWhitespace(b, i + 1, end);
    if (i >= end) return null;
    const c = b[i];
    const valueStart = i;
    let value: unknown;
    if (c === QUOTE) {
      i = scanString(b, text, i, end, controlFree);
      if (i === INVALID) return null;
      if (slot !== Slot.None) {
        if (escaped) value = JSON.parse(text.slice(valueStart, i));
        else if (spans && TEXT_SLOT[slot]) {
          value = SPAN;
          spanStarts[slot] = valueStart + 1;
          spanEnds[slot] = i - 1;
        } else value = text.slice(valueStart + 1, i - 1);
      }
    } else if (c === 0x2d || isDigit(c)) {
      i = scanNumber(b, i, end);
      if (i === INVALID) return null;
      if (slot !== Slot.None) value = numberAt(b, text, valueStart, i);
    } else if (c === 0x7b || c === 0x5b) {
      return undefined;
    } else if (c === 0x74) {
      i = scanWord(b, i, end, 'true');
      value = true;
    } else if (c === 0x66) {
      i = scanWord(b, i, end, 'false');
      value = false;
    } else if (c === 0x6e) {
      i = scanWord(b, i, end, 'null');
      value = null;
    } else {
      return null;
    }
    if (i === INVALID) return null;
    if (slot !== Slot.None) values[slot] = value;
    i = skipWhitespace(b, i, end);
    if (i >= end) return null;
    const next = b[i++];
    if (next === 0x7d) return skipWhitespace(b, i, end) === end ? true : null;
    if (next !== 0x2c) return null;
    i = skipWhitespace(b, i, end);
  }
}

/** Whether b[i] is allowed in a control-free chunk: no byte below 0x20 but LF, and CR only before LF. */
function allowedByte(b: Uint8Array, i: number, length: number): boolean {
  const c = b[i];
  if (c >= 0x20 || c === 0x0a) return true;
  return c === 0x0d && i + 1 < length && b[i + 1] === 0x0a;
}

/**
 * Whether the ASCII bytes b[0, length) have no control character but line ends (LF, CRLF): one pass
 * per chunk instead of a test per string. Four bytes at a time: an ASCII byte is below 0x20 exactly
 * when its bits 5 and 6 are both clear, so a word whose every byte has bit 6 set in
 * `x | x << 1` has none (a line's LF is one such word in ~250, checked byte by byte). 2.8× faster
 * than the regex `/[\x00-\x09\x0b\x0c\x0e-\x1f]|\r(?!\n)/` it replaces (25 against 71 µs per 64 KiB).
 */
export function controlFree(b: Uint8Array, length: number): boolean {
  let i = 0;
  // up to a 4-byte boundary of the underlying buffer, then whole words, then the tail
  while (i < length && (b.byteOffset + i) % 4 !== 0) if (!allowedByte(b, i++, length)) return false;
  const words = (length - i) >>> 2;
  // words > 0 only when the loop above stopped at a boundary (a short input may end before one)
  if (words > 0) {
    const view = new Int32Array(b.buffer, b.byteOffset + i, words);
    for (let k = 0; k < words; k++) {
      const x = view[k];
      if (((x | (x << 1)) & 0x40404040) !== 0x40404040) {
        const at = i + k * 4;
        if (
          !allowedByte(b, at, length) ||
          !allowedByte(b, at + 1, length) ||
          !allowedByte(b, at + 2, length) ||
          !allowedByte(b, at + 3, length)
        )
          return false;
      }
    }
  }
  for (let j = i + words * 4; j < length; j++) if (!allowedByte(b, j, length)) return false;
  return true;
}
