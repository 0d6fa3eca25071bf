/**
 * One streaming pass over the tail of an access-log file into counters (API.md §4.13, issue 11):
 * fixed 64 KiB reads into one reused buffer, lines found in it one at a time, nothing per line kept
 * past its counters. Synchronous on purpose: it runs in a worker thread (stats-worker.ts), never on the
 * event loop that answers requests.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { isAscii } from 'node:buffer';
import { parseAccessLine, readAsciiLine } from './access-log-parse.ts';
import { AccessLogStats } from './access-log-stats.ts';
import type { StatsView } from './schemas.ts';
import { LineFields } from './line-fields.ts';
import { inWindow, type TimeWindow } from './time-window.ts';

/** 64 KiB: a chunk's string stays below V8's large-object size, so it dies young instead of piling up until a full GC. */
const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/** One non-empty line into the stats: `null` when it did not parse (skipped); out-of-window ones read only. */
function count(stats: AccessLogStats, line: LineFields | null, window: TimeWindow): void {
  stats.linesRead++;
  if (line === null) {
    stats.skip();
    return;
  }
  stats.parsed(line.format);
  if (inWindow(line.ms, window)) stats.add(line);
}

/** The request of a line read as a string (reused line to line, as the scan's own). */
const fromString = new LineFields();

/** One raw line into the stats: empty lines are ignored. */
export function countLine(stats: AccessLogStats, line: string, window: TimeWindow): void {
  if (line.trim() === '') return;
  const record = parseAccessLine(line);
  count(stats, record === null ? null : fromString.fromRecord(record), window);
}

/** Where the scan sends lines: an ASCII chunk's lines as offsets into its bytes and string, others as strings. */
export interface LineSink {
  asciiLine(bytes: Uint8Array, text: string, start: number, end: number): void;
  line(line: string): void;
}

/**
 * Sends every line of the last `maxScanBytes` of the file to `sink`; a line cut by the scan start is
 * dropped. Most chunks are ASCII (isAscii is SIMD): those are decoded once as latin1 (the fastest
 * decoder, identical to UTF-8 on ASCII) and their lines never become strings of their own.
 */
export function forEachTailLine(path: string, maxScanBytes: number, sink: LineSink): void {
  const fd = openSync(path, 'r');
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
    const size = info.size;
    const start = Math.max(0, size - maxScanBytes);
    // from one byte before the window: if that byte is '\n' the first "line" is empty, else it is the cut line
    let position = start === 0 ? 0 : start - 1;
    let skipFirst = start > 0;
    let buffer = Buffer.allocUnsafe(CHUNK);
    let kept = 0; // bytes of an unfinished line at the buffer's start
    while (position < size) {
      const read = readSync(fd, buffer, kept, Math.min(buffer.length - kept, size - position), position);
      if (read === 0) break;
      position += read;
      const end = kept + read;
      const last = buffer.lastIndexOf(NEWLINE, end - 1);
      if (last < 0) {
        kept = end;
        if (kept === buffer.length) {
          // one line longer than the buffer: grow (rare; a line is normally < 4 KiB)
          const grown = Buffer.allocUnsafe(buffer.length * 2);
          buffer.copy(grown, 0, 0, kept);
          buffer = grown;
        }
        continue;
      }
      const ascii = isAscii(buffer.subarray(0, last));
      // one decode per chunk; lines are offsets (ASCII) or slices (cheap, no copy per line)
      const text = ascii ? buffer.toString('latin1', 0, last) : buffer.toString('utf8', 0, last);
      let from = 0;
      for (;;) {
        const nl = text.indexOf('\n', from);
        const stop = nl < 0 ? text.length : nl;
        if (skipFirst) skipFirst = false;
        else if (ascii) sink.asciiLine(buffer, text, from, stop);
        else
          sink.line(
            stop > from && text.charCodeAt(stop - 1) === 0x0d ? text.slice(from, stop - 1) : text.slice(from, stop),
          );
        if (nl < 0) break;
        from = nl + 1;
      }
      kept = end - last - 1;
      if (kept > 0) buffer.copy(buffer, 0, last + 1, end);
    }
    if (kept > 0 && !skipFirst) sink.line(buffer.toString('utf8', 0, kept));
  } finally {
    closeSync(fd);
  }
}

export interface ScanRequest {
  path: string;
  maxScanBytes: number;
  window: TimeWindow;
  top: number;
}

/** The Stats body of a file's tail. */
export function scanAccessLog(request: ScanRequest): StatsView {
  const stats = new AccessLogStats();
  const { window } = request;
  const fields = new LineFields();
  forEachTailLine(request.path, request.maxScanBytes, {
    asciiLine: (bytes, text, start, end) => {
      // an empty or all-space line is not a line read (as countLine's trim)
      let i = start;
      while (i < end && (bytes[i] === 0x20 || (bytes[i] >= 0x09 && bytes[i] <= 0x0d))) i++;
      if (i < end) count(stats, readAsciiLine(bytes, text, i, end, fields) ? fields : null, window);
    },
    line: (line) => countLine(stats, line, window),
  });
  return stats.result(`file:${request.path}`, request.top);
}
