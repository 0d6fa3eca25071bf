/**
 * The streaming scan (issue 11) against the plain reading of the same file: split into lines, each
 * counted through countLine (JSON.parse, the CLF regex). ASCII chunks take the byte fast paths,
 * others the string path; lines cross chunk borders, one is longer than a chunk, some end in CRLF.
 */
import test from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../helpers/build.ts';
import { fixture } from '../helpers/shared.ts';
import { countLine, scanAccessLog } from '../../plugins/logs/access-log-scan.ts';
import { AccessLogStats } from '../../plugins/logs/access-log-stats.ts';

const OPEN = { since: null, until: null };

/** The stats of a file read whole and counted line by line through the string path. */
async function reference(file: string) {
  const stats = new AccessLogStats();
  for (const line of (await readFile(file, 'utf8')).split('\n'))
    countLine(stats, line.endsWith('\r') ? line.slice(0, -1) : line, OPEN);
  return stats.result(`file:${file}`, 10);
}

test('the chunked scan counts a large mixed file exactly as the whole-file reading does', async (t) => {
  const json = (await readFile(fixture('access-logs', 'sample.json.log'), 'utf8')).split('\n').filter(Boolean);
  const clf = (await readFile(fixture('access-logs', 'sample.clf.log'), 'utf8')).split('\n').filter(Boolean);
  const lines: string[] = [];
  for (let round = 0; round < 6; round++) {
    // ~300 KB per round: several 64 KiB chunks, ASCII ones and (round 3) ones with UTF-8 text
    for (let i = 0; i < json.length; i++) {
      let line = round === 3 && i % 7 === 0 ? json[i].replace('"RequestPath":"/', '"RequestPath":"/ünï/') : json[i];
      if (i % 11 === 0) line = line.replace('"ClientHost":"', '"Note":"tab\\tand \\"quote\\"","ClientHost":"');
      lines.push(i % 13 === 0 ? `${line}\r` : line);
      lines.push(clf[i]);
    }
    lines.push(
      '',
      '   ',
      'garbage line',
      '{"DownstreamStatus":200,',
      `{"DownstreamStatus":404,"StartUTC":"2026-11-22T10:00:00Z","RequestPath":"/${'x'.repeat(70_000)}"}`,
    );
  }
  const file = path.join(await tempDir(t), 'mixed.log');
  await writeFile(file, `${lines.join('\n')}\n`);
  const scanned = scanAccessLog({ path: file, maxScanBytes: Number.MAX_SAFE_INTEGER, window: OPEN, top: 10 });
  t.deepEqual(scanned, await reference(file));
  t.is(scanned.format, 'mixed');
  t.is(scanned.requests, 6 * (2 * json.length + 1));
  t.is(scanned.lines_skipped, 6 * 2);
});

test('the chunked scan of a file without a final newline counts its last line', async (t) => {
  const clf = (await readFile(fixture('access-logs', 'sample.clf.log'), 'utf8')).trimEnd();
  const file = path.join(await tempDir(t), 'tail.log');
  await writeFile(file, clf);
  const scanned = scanAccessLog({ path: file, maxScanBytes: Number.MAX_SAFE_INTEGER, window: OPEN, top: 10 });
  t.is(scanned.requests, 200);
  t.deepEqual(scanned, await reference(file));
});
