/**
 * One Traefik access-log line → one request record (FORMATS.md A5). The format is detected per
 * line: a line starting with `{` is JSON, anything else is tried as Common Log Format.
 */

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
const CLF = /^(\S+) - (\S+) \[([^\]]+)\] "(\S+) (.*?) (\S+)" (\S+) (\S+) "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"(?: (\S+) "([^"]*)" "([^"]*)" (\d+)ms)?$/;
const CLF_TIME = /^(\d\d)\/([A-Z][a-z]{2})\/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const absent = (value: unknown): string | null => (typeof value === 'string' && value !== '' && value !== '-' ? value : null);
const withoutQuery = (path: string | null): string | null => (path === null ? null : path.split('?', 1)[0]);

/** `22/Nov/2026:10:00:00 +0000` → ms, or NaN. */
function clfTime(text: string): number {
  const m = CLF_TIME.exec(text);
  const month = m ? MONTHS.indexOf(m[2]) : -1;
  if (!m || month < 0) return Number.NaN;
  const offsetMs = (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) * 60_000;
  return Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6])) - offsetMs;
}

function parseJson(line: string): AccessRecord | null {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return null;
  const status = entry.DownstreamStatus;
  const ms = Date.parse(String(entry.StartUTC ?? entry.time ?? ''));
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

/** The record of one line, or null when it is neither valid JSON nor CLF. */
export function parseAccessLine(line: string): AccessRecord | null {
  const text = line.trim();
  if (text === '') return null;
  return text.startsWith('{') ? parseJson(text) : parseClf(text);
}
