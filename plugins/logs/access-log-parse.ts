/**
 * One Traefik access-log line → one request record (FORMATS.md A5). The format is detected per
 * line: a line starting with `{` is JSON, anything else is tried as Common Log Format.
 */
import {
  controlFree,
  FIELD,
  fieldValues,
  isDigit,
  jsonFieldsInto,
  numberAt,
  SPAN,
  spanEnds,
  spanStarts,
  type JsonFields,
} from './access-log-json-fields.ts';
import { isAbsent, LineFields, Text } from './line-fields.ts';

export interface AccessRecord {
  format: 'json' | 'clf';
  /** Request start, ms since the epoch. */
  ms: number;
  ip: string | null;
  host: string | null;
  method: string | null;
  /** The request path without its query string. */
  path: string | null;
  status: number;
  bytes: number;
  router: string | null;
  service: string | null;
  /** Null when the line carries no duration (genericCLF). */
  latencyMs: number | null;
}

// FORMATS.md A5's robust regex; the last four fields are optional so genericCLF lines parse too.
const CLF =
  /^(\S+) - (\S+) \[([^\]]+)\] "(\S+) (.*?) (\S+)" (\S+) (\S+) "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"(?: (\S+) "([^"]*)" "([^"]*)" (\d+)ms)?$/;
const CLF_TIME = /^(\d\d)\/([A-Z][a-z]{2})\/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const absent = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' && value !== '-' ? value : null;
const withoutQuery = (path: string | null): string | null => {
  if (path === null) return null;
  const query = path.indexOf('?');
  return query < 0 ? path : path.slice(0, query);
};

/** `22/Nov/2026:10:00:00 +0000` → ms, or NaN; consecutive lines mostly share the second, so the last one is kept. */
let lastClfTime = '';
let lastClfMs = Number.NaN;
function clfTime(text: string): number {
  if (text === lastClfTime) return lastClfMs;
  lastClfMs = clfTimeUncached(text);
  lastClfTime = text;
  return lastClfMs;
}

function clfTimeUncached(text: string): number {
  const m = CLF_TIME.exec(text);
  const month = m ? MONTHS.indexOf(m[2]) : -1;
  if (!m || month < 0) return Number.NaN;
  const offsetMs = (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) * 60_000;
  return Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6])) - offsetMs;
}

/** The milliseconds of b[start, end) = `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z` (hour 00–23), or -1 when it is not that shape. */
function isoFractionMs(b: Uint8Array, start: number, end: number): number {
  const length = end - start;
  if (length < 20 || length > 30 || b[end - 1] !== 0x5a /* Z */) return -1;
  for (let i = 0; i < 19; i++) {
    const c = b[start + i];
    const separator = i === 4 || i === 7 ? 0x2d : i === 10 ? 0x54 : i === 13 || i === 16 ? 0x3a : 0;
    if (separator !== 0 ? c !== separator : c < 0x30 || c > 0x39) return -1;
  }
  if (b[start + 11] > 0x32 || (b[start + 11] === 0x32 && b[start + 12] > 0x33)) return -1;
  if (length === 20) return 0;
  if (b[start + 19] !== 0x2e /* . */ || length === 21) return -1;
  let ms = 0;
  for (let i = 20; i < length - 1; i++) {
    const d = b[start + i] - 0x30;
    if (d < 0 || d > 9) return -1;
    if (i < 23) ms += d * (i === 20 ? 100 : i === 21 ? 10 : 1);
  }
  return ms;
}

/** The digit at b[i] (the caller has checked it is one). */
const digit = (b: Uint8Array, i: number): number => b[i] - 0x30;

/** The day of the last ISO instant read (`yyyy*10000 + mm*100 + dd`) and Date.parse of its midnight. */
let cachedDayKey = -1;
let cachedDayMs = Number.NaN;

/**
 * Date.parse of the ASCII instant b[start, end), which `text` holds from `at` (for what is left to
 * Date.parse). Instants as Traefik writes them (`2026-11-01T00:00:00.287417357Z`): Date.parse of the
 * day's midnight is cached (a day's lines share it), the time of day and the fraction added by hand,
 * as Date.parse adds them (it truncates a fraction to milliseconds); hour 24 and minutes or seconds
 * past 59 are left to Date.parse.
 */
function isoTimeBytes(b: Uint8Array, start: number, end: number, text: string, at: number): number {
  const fraction = isoFractionMs(b, start, end);
  if (fraction < 0) return Date.parse(text.slice(at, at + end - start));
  const minute = digit(b, start + 14) * 10 + digit(b, start + 15);
  const second = digit(b, start + 17) * 10 + digit(b, start + 18);
  // Date.parse rejects minute or second 60 and above
  if (minute > 59 || second > 59) return Date.parse(text.slice(at, at + end - start));
  const key =
    (digit(b, start) * 1000 + digit(b, start + 1) * 100 + digit(b, start + 2) * 10 + digit(b, start + 3)) * 10000 +
    (digit(b, start + 5) * 10 + digit(b, start + 6)) * 100 +
    digit(b, start + 8) * 10 +
    digit(b, start + 9);
  if (key !== cachedDayKey) {
    // month and day are checked by Date.parse (NaN for month 13 or day 32, whatever the time)
    cachedDayKey = key;
    cachedDayMs = Date.parse(`${text.slice(at, at + 10)}T00:00:00Z`);
  }
  const hour = digit(b, start + 11) * 10 + digit(b, start + 12);
  return cachedDayMs + hour * 3_600_000 + minute * 60_000 + second * 1000 + fraction;
}

const isoScratch = new Uint8Array(30);

/** Date.parse(text), faster for instants as Traefik writes them (isoTimeBytes). */
export function isoTime(text: string): number {
  const length = text.length;
  if (length < 20 || length > 30) return Date.parse(text);
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return Date.parse(text);
    isoScratch[i] = c;
  }
  return isoTimeBytes(isoScratch, 0, length, text, 0);
}

/** The record of a parsed JSON line's fields (the whole object or only the wanted keys: same result). */
function fromEntry(entry: JsonFields): AccessRecord | null {
  const status = entry.DownstreamStatus;
  const time = entry.StartUTC ?? entry.time ?? '';
  const ms = typeof time === 'string' ? isoTime(time) : Date.parse(String(time));
  if (typeof status !== 'number' || !Number.isInteger(status) || Number.isNaN(ms)) return null;
  const duration = entry.Duration;
  const bytes = entry.DownstreamContentSize;
  return {
    format: 'json',
    ms,
    ip: absent(entry.ClientHost),
    host: absent(entry.RequestHost),
    method: absent(entry.RequestMethod),
    path: withoutQuery(absent(entry.RequestPath)),
    status,
    bytes: typeof bytes === 'number' && bytes > 0 ? bytes : 0,
    router: absent(entry.RouterName),
    service: absent(entry.ServiceName),
    latencyMs: typeof duration === 'number' && duration >= 0 ? duration / 1e6 : null,
  };
}

/** JSON.parse's reading of a line: the reference, and the fallback for lines jsonFieldsInto leaves to it. */
export function parseJsonSlow(line: string): AccessRecord | null {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return null;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return null;
  return fromEntry(entry as JsonFields);
}

function parseClf(line: string): AccessRecord | null {
  const m = CLF.exec(line);
  if (!m) return null;
  const ms = clfTime(m[3]);
  const status = /^\d{3}$/.test(m[7]) ? Number(m[7]) : Number.NaN;
  if (Number.isNaN(ms) || Number.isNaN(status)) return null;
  return {
    format: 'clf',
    ms,
    ip: absent(m[1]),
    host: null, // the common format has no Host field
    method: absent(m[4]),
    path: withoutQuery(absent(m[5])),
    status,
    bytes: /^\d+$/.test(m[8]) ? Number(m[8]) : 0,
    router: m[12] === undefined ? null : absent(m[12]),
    service: null, // CLF names the server URL, not the Traefik service
    latencyMs: m[14] === undefined ? null : Number(m[14]),
  };
}

const SPACE = 0x20;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index of the first `byte` in b[i, end), or `end`. */
function findByte(b: Uint8Array, byte: number, i: number, end: number): number {
  while (i < end && b[i] !== byte) i++;
  return i;
}

/** Where the digits starting at i end. */
function digitsEnd(b: Uint8Array, i: number, end: number): number {
  while (i < end && isDigit(b[i])) i++;
  return i;
}

/** At an opening quote: the position of the closing one of `"((?:[^"\\]|\\.)*)"`, or -1. */
function quotedEnd(b: Uint8Array, i: number, end: number): number {
  for (i++; i < end; i++) {
    const c = b[i];
    if (c === DQUOTE) return i;
    if (c === BACKSLASH) i++;
  }
  return -1;
}

/** Month index of the three bytes at i (`Jan`…`Dec`), or -1. */
function monthAt(b: Uint8Array, i: number): number {
  const key = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
  for (let m = 0; m < 12; m++) if (MONTH_KEYS[m] === key) return m;
  return -1;
}
const MONTH_KEYS = MONTHS.map((m) => (m.charCodeAt(0) << 16) | (m.charCodeAt(1) << 8) | m.charCodeAt(2));
const two = (b: Uint8Array, i: number): number => (b[i] - 0x30) * 10 + (b[i + 1] - 0x30);

/** The day of the last CLF time read (`yyyy*10000 + month*100 + dd`) and Date.UTC of its midnight. */
let clfDayKey = -1;
let clfDayMs = Number.NaN;

/**
 * clfTimeUncached() of the ASCII bytes b[start, end): the same shape check (CLF_TIME), the same
 * Date.UTC (its day part cached: a day's lines share it), without a regex or a string.
 */
function clfTimeBytes(b: Uint8Array, start: number, end: number): number {
  // dd/Mon/yyyy:hh:mm:ss +hhmm
  if (end - start !== 26) return Number.NaN;
  for (const i of CLF_TIME_DIGITS) if (!isDigit(b[start + i])) return Number.NaN;
  if (b[start + 2] !== 0x2f || b[start + 6] !== 0x2f || b[start + 11] !== 0x3a || b[start + 14] !== 0x3a)
    return Number.NaN;
  if (b[start + 17] !== 0x3a || b[start + 20] !== SPACE) return Number.NaN;
  const sign = b[start + 21];
  if (sign !== 0x2b && sign !== 0x2d) return Number.NaN;
  const month = monthAt(b, start + 3);
  if (month < 0) return Number.NaN;
  const year = two(b, start + 7) * 100 + two(b, start + 9);
  const day = two(b, start);
  const key = year * 10000 + month * 100 + day;
  if (key !== clfDayKey) {
    clfDayKey = key;
    clfDayMs = Date.UTC(year, month, day);
  }
  const offsetMs = (sign === 0x2d ? -1 : 1) * (two(b, start + 22) * 60 + two(b, start + 24)) * 60_000;
  // Date.UTC(y, mo, d, h, mi, s) is MakeDay(y, mo, d) × 86,400,000 + h × 3,600,000 + mi × 60,000 + s × 1,000
  return clfDayMs + two(b, start + 12) * 3_600_000 + two(b, start + 15) * 60_000 + two(b, start + 18) * 1000 - offsetMs;
}
const CLF_TIME_DIGITS = [0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25];

/**
 * The CLF regex's reading of the ASCII line b[start, end) without the regex (whose 14 captures,
 * user agent and referer included, cost more than the rest of a line's stats), or `undefined` when
 * the line is not the plain shape and only the regex can tell. `clean`: the chunk has no control
 * character, so `\S` is "not a space" and `.` is any byte. Accepted lines are those where the
 * regex's first choice at every step succeeds (the path ends at the last space before the request's
 * closing quote; greedy groups), so the regex returns exactly these captures for them.
 */
function parseClfAscii(
  b: Uint8Array,
  text: string,
  start: number,
  end: number,
  out: LineFields,
): true | null | undefined {
  // ^(\S+) - (\S+) \[([^\]]+)\] "
  const ipEnd = findByte(b, SPACE, start, end);
  if (ipEnd === start || ipEnd + 3 > end || b[ipEnd + 1] !== 0x2d || b[ipEnd + 2] !== SPACE) return undefined;
  const userEnd = findByte(b, SPACE, ipEnd + 3, end);
  if (userEnd === ipEnd + 3 || userEnd + 2 > end || b[userEnd + 1] !== 0x5b) return undefined;
  const timeStart = userEnd + 2;
  const timeEnd = findByte(b, 0x5d, timeStart, end);
  if (timeEnd === timeStart || timeEnd + 3 > end || b[timeEnd + 1] !== SPACE || b[timeEnd + 2] !== DQUOTE)
    return undefined;
  // (\S+) (.*?) (\S+)" : the request up to its first quote; the path ends at its last space
  const methodStart = timeEnd + 3;
  const methodEnd = findByte(b, SPACE, methodStart, end);
  if (methodEnd === methodStart || methodEnd >= end) return undefined;
  const requestEnd = findByte(b, DQUOTE, methodEnd + 1, end);
  if (requestEnd >= end) return undefined;
  let pathEnd = requestEnd - 1;
  while (pathEnd > methodEnd && b[pathEnd] !== SPACE) pathEnd--;
  // no second space (the regex needs one after the method and one before the protocol), or no protocol
  if (pathEnd <= methodEnd || pathEnd + 1 === requestEnd) return undefined;
  // " (\S+) (\S+) "referer" "agent"
  if (requestEnd + 1 >= end || b[requestEnd + 1] !== SPACE) return undefined;
  const statusStart = requestEnd + 2;
  const statusEnd = findByte(b, SPACE, statusStart, end);
  if (statusEnd === statusStart || statusEnd >= end) return undefined;
  const bytesStart = statusEnd + 1;
  const bytesEnd = findByte(b, SPACE, bytesStart, end);
  if (bytesEnd === bytesStart || bytesEnd + 1 >= end || b[bytesEnd + 1] !== DQUOTE) return undefined;
  const refererEnd = quotedEnd(b, bytesEnd + 1, end);
  if (refererEnd < 0 || refererEnd + 2 >= end || b[refererEnd + 1] !== SPACE || b[refererEnd + 2] !== DQUOTE)
    return undefined;
  const agentEnd = quotedEnd(b, refererEnd + 2, end);
  if (agentEnd < 0) return undefined;
  // (?: (\S+) "([^"]*)" "([^"]*)" (\d+)ms)?$
  let routerStart = -1;
  let routerEnd = -1;
  let latencyMs: number | null = null;
  if (agentEnd + 1 !== end) {
    if (b[agentEnd + 1] !== SPACE) return undefined;
    const countEnd = findByte(b, SPACE, agentEnd + 2, end);
    if (countEnd === agentEnd + 2 || countEnd + 1 >= end || b[countEnd + 1] !== DQUOTE) return undefined;
    routerStart = countEnd + 2;
    routerEnd = findByte(b, DQUOTE, routerStart, end);
    if (routerEnd + 2 >= end || b[routerEnd + 1] !== SPACE || b[routerEnd + 2] !== DQUOTE) return undefined;
    const urlEnd = findByte(b, DQUOTE, routerEnd + 3, end);
    if (urlEnd + 1 >= end || b[urlEnd + 1] !== SPACE) return undefined;
    const msEnd = digitsEnd(b, urlEnd + 2, end);
    if (msEnd === urlEnd + 2 || msEnd + 2 !== end || b[msEnd] !== 0x6d || b[msEnd + 1] !== 0x73) return undefined;
    latencyMs = numberAt(b, text, urlEnd + 2, msEnd);
  }
  const ms = clfTimeBytes(b, timeStart, timeEnd);
  const status =
    statusEnd - statusStart === 3 && digitsEnd(b, statusStart, statusEnd) === statusEnd
      ? numberAt(b, text, statusStart, statusEnd)
      : Number.NaN;
  if (Number.isNaN(ms) || Number.isNaN(status)) return null;
  out.format = 'clf';
  out.ms = ms;
  out.status = status;
  out.bytes = digitsEnd(b, bytesStart, bytesEnd) === bytesEnd ? numberAt(b, text, bytesStart, bytesEnd) : 0;
  out.latencyMs = latencyMs;
  out.b = b;
  out.setSpan(Text.Ip, start, ipEnd);
  out.setString(Text.Host, null); // the common format has no Host field
  out.setSpan(Text.Method, methodStart, methodEnd);
  const pathStart = methodEnd + 1;
  if (isAbsent(b, pathStart, pathEnd)) out.setString(Text.Path, null);
  else out.setRange(Text.Path, pathStart, findByte(b, 0x3f, pathStart, pathEnd));
  if (routerStart < 0) out.setString(Text.Router, null);
  else out.setSpan(Text.Router, routerStart, routerEnd);
  out.setString(Text.Service, null); // CLF names the server URL, not the Traefik service
  return true;
}

/** controlFree() of the chunk whose lines are being read, found once per chunk. */
let checkedChunk = '';
let checkedClean = false;
function isClean(bytes: Uint8Array, chunk: string): boolean {
  if (chunk !== checkedChunk) {
    // an ASCII chunk: its string's offsets are its bytes' offsets
    checkedClean = controlFree(bytes, chunk.length);
    checkedChunk = chunk;
  }
  return checkedClean;
}

const isAsciiSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

/**
 * A JSON text field of fieldValues into `out`: a byte range where jsonFieldsInto left one, else
 * `absent` of the value (a string with escapes, a number, null...). `path` also cuts the query.
 */
function textField(out: LineFields, field: Text, slot: number, path: boolean): void {
  const value = fieldValues[slot];
  if (value !== SPAN) {
    out.setString(field, path ? withoutQuery(absent(value)) : absent(value));
    return;
  }
  const start = spanStarts[slot];
  const end = spanEnds[slot];
  if (!path) out.setSpan(field, start, end);
  else if (isAbsent(out.b, start, end)) out.setString(field, null);
  else out.setRange(field, start, findByte(out.b, 0x3f, start, end));
}

/** fromEntry() of fieldValues into `out`: false when the line is not a request (fromEntry's null). */
function fromFieldValues(b: Uint8Array, text: string, out: LineFields): boolean {
  const status = fieldValues[FIELD.DownstreamStatus];
  // fromEntry's `StartUTC ?? time ?? ''`, either of them possibly a byte range
  let slot: number = FIELD.StartUTC;
  if (fieldValues[slot] === undefined || fieldValues[slot] === null) slot = FIELD.Time;
  const time = fieldValues[slot] ?? '';
  const ms =
    time === SPAN
      ? isoTimeBytes(b, spanStarts[slot], spanEnds[slot], text, spanStarts[slot])
      : typeof time === 'string'
        ? isoTime(time)
        : Date.parse(String(time));
  if (typeof status !== 'number' || !Number.isInteger(status) || Number.isNaN(ms)) return false;
  const duration = fieldValues[FIELD.Duration];
  const bytes = fieldValues[FIELD.DownstreamContentSize];
  out.format = 'json';
  out.ms = ms;
  out.status = status;
  out.bytes = typeof bytes === 'number' && bytes > 0 ? bytes : 0;
  out.latencyMs = typeof duration === 'number' && duration >= 0 ? duration / 1e6 : null;
  out.b = b;
  textField(out, Text.Ip, FIELD.ClientHost, false);
  textField(out, Text.Host, FIELD.RequestHost, false);
  textField(out, Text.Method, FIELD.RequestMethod, false);
  textField(out, Text.Path, FIELD.RequestPath, true);
  textField(out, Text.Router, FIELD.RouterName, false);
  textField(out, Text.Service, FIELD.ServiceName, false);
  return true;
}

/**
 * The request of the ASCII line b[start, end) into `out`, `text` holding the same bytes at the same
 * offsets (the scan's chunk); false when the line is not a request. The same reading as
 * parseAccessLine(text.slice(start, end)), without strings for the counted fields where the line
 * takes the byte fast paths. An ASCII line's trim() removes exactly the ASCII spaces skipped here.
 */
export function readAsciiLine(b: Uint8Array, text: string, start: number, end: number, out: LineFields): boolean {
  while (start < end && isAsciiSpace(b[start])) start++;
  while (end > start && isAsciiSpace(b[end - 1])) end--;
  if (start === end) return false;
  const clean = isClean(b, text);
  let slow: AccessRecord | null;
  if (b[start] !== 0x7b) {
    const read = clean ? parseClfAscii(b, text, start, end, out) : undefined;
    if (read !== undefined) return read !== null;
    slow = parseClf(text.slice(start, end));
  } else {
    const read = jsonFieldsInto(b, text, start, end, clean, true);
    if (read === true) return fromFieldValues(b, text, out);
    if (read === null) return false;
    slow = parseJsonSlow(text.slice(start, end));
  }
  if (slow === null) return false;
  out.fromRecord(slow);
  return true;
}

/** readAsciiLine() as an AccessRecord (tests compare it with parseAccessLine). */
export function parseAsciiLine(b: Uint8Array, text: string, start: number, end: number): AccessRecord | null {
  const out = new LineFields();
  return readAsciiLine(b, text, start, end, out) ? out.toRecord(text) : null;
}

/** The record of one line, or null when it is neither valid JSON nor CLF. */
export function parseAccessLine(line: string): AccessRecord | null {
  const text = line.trim();
  if (text === '') return null;
  return text.startsWith('{') ? parseJsonSlow(text) : parseClf(text);
}
