/**
 * One Traefik access-log line → one request record (FORMATS.md A5). The format is detected per
 * line: a line starting with `{` is JSON, anything else is tried as Common Log Format.
 */
import { controlFree, jsonFields, type JsonFields } from './access-log-json-fields.ts';

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

/**
 * ISO instants as Traefik writes them (`2026-11-01T00:00:00.287417357Z`): Date.parse of the whole
 * second is cached, the fraction added by hand. Date.parse truncates a fraction to milliseconds, so
 * this gives the same number; hour 24 is left to Date.parse (valid only without a fraction).
 */
let cachedSecond = '';
let cachedSecondMs = Number.NaN;

const digitAt = (text: string, i: number): number => {
  const d = text.charCodeAt(i) - 0x30;
  return d >= 0 && d <= 9 ? d : -1;
};

/** The milliseconds of `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z` (hour 00–23), or -1 when `text` is not that shape. */
function isoFractionMs(text: string): number {
  const length = text.length;
  if (length < 20 || length > 30 || text.charCodeAt(length - 1) !== 0x5a /* Z */) return -1;
  for (let i = 0; i < 19; i++) {
    const c = text.charCodeAt(i);
    const separator = i === 4 || i === 7 ? 0x2d : i === 10 ? 0x54 : i === 13 || i === 16 ? 0x3a : 0;
    if (separator !== 0 ? c !== separator : c < 0x30 || c > 0x39) return -1;
  }
  if (text.charCodeAt(11) > 0x32 || (text.charCodeAt(11) === 0x32 && text.charCodeAt(12) > 0x33)) return -1;
  if (length === 20) return 0;
  if (text.charCodeAt(19) !== 0x2e /* . */ || length === 21) return -1;
  let ms = 0;
  for (let i = 20; i < length - 1; i++) {
    const d = digitAt(text, i);
    if (d < 0) return -1;
    if (i < 23) ms += d * (i === 20 ? 100 : i === 21 ? 10 : 1);
  }
  return ms;
}

/**
 * ISO instants as Traefik writes them (`2026-11-01T00:00:00.287417357Z`): Date.parse of the whole
 * second is cached, the fraction added by hand. Date.parse truncates a fraction to milliseconds, so
 * this gives the same number; hour 24 is left to Date.parse (valid only without a fraction).
 */
export function isoTime(text: string): number {
  const fraction = isoFractionMs(text);
  if (fraction < 0) return Date.parse(text);
  if (cachedSecond === '' || !text.startsWith(cachedSecond)) {
    cachedSecond = text.slice(0, 19);
    cachedSecondMs = Date.parse(`${cachedSecond}Z`);
  }
  return cachedSecondMs + fraction;
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

/** JSON.parse's reading of a line: the reference, and the fallback for lines jsonFields leaves to it. */
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

/** controlFree() of the chunk whose lines are being read, found once per chunk and only if it has JSON lines. */
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
 * The record of the ASCII line b[start, end), `text` holding the same bytes at the same offsets (the
 * scan's chunk): the same result as parseAccessLine(text.slice(start, end)), without the slice for
 * JSON lines. An ASCII line's trim() removes exactly the ASCII spaces skipped here.
 */
export function parseAsciiLine(b: Uint8Array, text: string, start: number, end: number): AccessRecord | null {
  while (start < end && isAsciiSpace(b[start])) start++;
  while (end > start && isAsciiSpace(b[end - 1])) end--;
  if (start === end) return null;
  if (b[start] !== 0x7b) return parseClf(text.slice(start, end));
  const fields = jsonFields(b, text, start, end, isClean(b, text));
  if (fields === undefined) return parseJsonSlow(text.slice(start, end));
  return fields === null ? null : fromEntry(fields);
}

/** The record of one line, or null when it is neither valid JSON nor CLF. */
export function parseAccessLine(line: string): AccessRecord | null {
  const text = line.trim();
  if (text === '') return null;
  return text.startsWith('{') ? parseJsonSlow(text) : parseClf(text);
}
