/**
 * One access-log request as the stats read it, reused from line to line by the scan (issue 11): its
 * text fields are byte ranges of the read chunk where the line is plain ASCII, so no string is made
 * for them, and strings only where a slow path read the line (JSON.parse, the CLF regex, non-ASCII
 * chunks). AccessRecord is the same request with every text field a string.
 */
import type { AccessRecord } from './access-log-parse.ts';

/** The text fields, in AccessRecord's order. */
export const Text = { Ip: 0, Host: 1, Method: 2, Path: 3, Router: 4, Service: 5 } as const;
export type Text = (typeof Text)[keyof typeof Text];
const TEXT_FIELDS = 6;
const DASH = 0x2d;
const EMPTY = new Uint8Array(0);

export class LineFields {
  format: 'json' | 'clf' = 'clf';
  ms = 0;
  status = 0;
  bytes = 0;
  latencyMs: number | null = null;
  /** The chunk the byte ranges point into. */
  b: Uint8Array = EMPTY;
  /** Per text field: a byte range of `b` (start ≥ 0), or start -1 and the value in `strings` (null: absent). */
  readonly starts = new Int32Array(TEXT_FIELDS);
  readonly ends = new Int32Array(TEXT_FIELDS);
  readonly strings: (string | null)[] = new Array<string | null>(TEXT_FIELDS).fill(null);

  setString(field: Text, value: string | null): void {
    this.starts[field] = -1;
    this.strings[field] = value;
  }

  /** b[start, end) as the value, or absent when it is empty or `-` (AccessRecord's `absent`). */
  setSpan(field: Text, start: number, end: number): void {
    if (isAbsent(this.b, start, end)) this.setString(field, null);
    else this.setRange(field, start, end);
  }

  /** b[start, end) as the value, whatever it holds (an empty range is the empty string). */
  setRange(field: Text, start: number, end: number): void {
    this.starts[field] = start;
    this.ends[field] = end;
  }

  /** The request of a record read by a slow path. */
  fromRecord(record: AccessRecord): this {
    this.format = record.format;
    this.ms = record.ms;
    this.status = record.status;
    this.bytes = record.bytes;
    this.latencyMs = record.latencyMs;
    this.setString(Text.Ip, record.ip);
    this.setString(Text.Host, record.host);
    this.setString(Text.Method, record.method);
    this.setString(Text.Path, record.path);
    this.setString(Text.Router, record.router);
    this.setString(Text.Service, record.service);
    return this;
  }

  /** The same request as an AccessRecord; `text` holds b's bytes at the same offsets (an ASCII chunk). */
  toRecord(text: string): AccessRecord {
    const value = (field: Text) =>
      this.starts[field] < 0 ? this.strings[field] : text.slice(this.starts[field], this.ends[field]);
    return {
      format: this.format,
      ms: this.ms,
      ip: value(Text.Ip),
      host: value(Text.Host),
      method: value(Text.Method),
      path: value(Text.Path),
      status: this.status,
      bytes: this.bytes,
      router: value(Text.Router),
      service: value(Text.Service),
      latencyMs: this.latencyMs,
    };
  }
}

/** Whether b[start, end) is empty or `-`. */
export const isAbsent = (b: Uint8Array, start: number, end: number): boolean =>
  end === start || (end - start === 1 && b[start] === DASH);
