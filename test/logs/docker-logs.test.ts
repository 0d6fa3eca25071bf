/** Unit tests of the Docker log body decoding (FORMATS.md C2) and the access-log line parser (A5). */
import test from 'ava';
import { parseAccessLine } from '../../plugins/logs/access-log-parse.ts';
import { demultiplex, logLines, MAX_LINE_BYTES, timestampKey } from '../../plugins/logs/docker-logs.ts';
import { LiveLogDecoder } from '../../plugins/logs/live-decoder.ts';

const frame = (type: number, text: string | Buffer): Buffer => {
  const payload = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = type;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
};

test('demultiplex routes frames by stream type (0 and 1 stdout, 2 stderr)', (t) => {
  const frames = demultiplex(Buffer.concat([frame(1, 'a'), frame(2, 'b'), frame(0, 'c')]));
  t.deepEqual(
    frames.map((f) => [f.stream, f.payload.toString()]),
    [
      ['stdout', 'a'],
      ['stderr', 'b'],
      ['stdout', 'c'],
    ],
  );
});

test('logLines joins frames that are not line-aligned and merges streams by timestamp', (t) => {
  const body = Buffer.concat([
    frame(1, '2026-01-01T00:00:00.5Z out '),
    frame(1, 'one\n2026-01-01T00:00:02Z out two\n'),
    frame(2, '2026-01-01T00:00:01.000000001Z err one\r\n'),
    frame(2, '2026-01-01T00:00:03Z no newline'),
  ]);
  t.deepEqual(logLines(body, false), [
    { ts: '2026-01-01T00:00:00.5Z', stream: 'stdout', line: 'out one', truncated: false },
    { ts: '2026-01-01T00:00:01.000000001Z', stream: 'stderr', line: 'err one', truncated: false },
    { ts: '2026-01-01T00:00:02Z', stream: 'stdout', line: 'out two', truncated: false },
    { ts: '2026-01-01T00:00:03Z', stream: 'stderr', line: 'no newline', truncated: false },
  ]);
});

test('logLines reads a TTY body raw, all stdout', (t) => {
  const body = Buffer.from('2026-01-01T00:00:00Z a\r\n2026-01-01T00:00:01Z b\r\n');
  t.deepEqual(
    logLines(body, true).map((l) => [l.stream, l.line]),
    [
      ['stdout', 'a'],
      ['stdout', 'b'],
    ],
  );
});

test('logLines cuts a line at 16 KiB without splitting a UTF-8 character', (t) => {
  const long = 'a' + 'é'.repeat(MAX_LINE_BYTES);
  const [line] = logLines(frame(1, `2026-01-01T00:00:00Z ${long}\n`), false);
  t.true(line.truncated);
  t.true(Buffer.byteLength(line.line) <= MAX_LINE_BYTES);
  t.false(line.line.includes('\uFFFD'));
});

test('timestampKey orders RFC3339Nano stamps whose fractions have different lengths', (t) => {
  t.true(timestampKey('2026-01-01T00:00:00.5Z') > timestampKey('2026-01-01T00:00:00.49Z'));
  t.true(timestampKey('2026-01-01T00:00:01Z') > timestampKey('2026-01-01T00:00:00.999999999Z'));
});

test('parseAccessLine reads JSON, CLF and genericCLF lines and rejects others', (t) => {
  t.like(
    parseAccessLine(
      '{"ClientHost":"1.2.3.4","DownstreamStatus":404,"StartUTC":"2025-01-08T13:27:03.200888017Z","RequestPath":"/x?y=1","Duration":1500000}',
    ),
    {
      format: 'json',
      ip: '1.2.3.4',
      status: 404,
      path: '/x',
      latencyMs: 1.5,
      ms: Date.parse('2025-01-08T13:27:03.200Z'),
    },
  );
  t.like(
    parseAccessLine(
      '203.0.113.7 - - [08/Jan/2025:14:27:03 +0100] "GET /x?y=1 HTTP/2.0" 200 612 "-" "Mozilla (X; Y)" 41 "app@http" "http://10.0.0.5:8080" 2ms',
    ),
    {
      format: 'clf',
      ip: '203.0.113.7',
      method: 'GET',
      path: '/x',
      status: 200,
      bytes: 612,
      router: 'app@http',
      latencyMs: 2,
      ms: Date.parse('2025-01-08T13:27:03Z'),
    },
  );
  t.like(parseAccessLine('203.0.113.7 - - [08/Jan/2025:13:27:03 +0000] "GET / HTTP/1.1" 404 - "-" "-"'), {
    format: 'clf',
    status: 404,
    bytes: 0,
    router: null,
    latencyMs: null,
  });
  t.like(
    parseAccessLine('203.0.113.7 - - [08/Jan/2025:13:27:03 +0000] "GET / HTTP/1.1" 404 19 "-" "-" 3 "-" "-" 0ms'),
    { router: null, latencyMs: 0 },
  );
  for (const bad of [
    '',
    'hello',
    '{"DownstreamStatus":"200"}',
    '[1]',
    '1.2.3.4 - - [99/Foo/2025:13:27:03 +0000] "GET / HTTP/1.1" 200 1 "-" "-"',
  ]) {
    t.is(parseAccessLine(bad), null, bad);
  }
});

test('LiveLogDecoder gives the same lines when frames arrive cut at every byte', (t) => {
  const body = Buffer.concat([
    frame(1, '2026-01-01T00:00:00Z a\n2026-01-01T00:00:01Z '),
    frame(2, '2026-01-01T00:00:02Z b\n'),
    frame(1, 'c\n2026-01-01T00:00:03Z tail'),
  ]);
  const seen: string[] = [];
  const decoder = new LiveLogDecoder(false, (line) => seen.push(`${line.stream}:${line.ts}:${line.line}`));
  for (let i = 0; i < body.length; i++) decoder.push(body.subarray(i, i + 1));
  decoder.end();
  t.deepEqual(seen, [
    'stdout:2026-01-01T00:00:00Z:a',
    'stderr:2026-01-01T00:00:02Z:b',
    'stdout:2026-01-01T00:00:01Z:c',
    'stdout:2026-01-01T00:00:03Z:tail',
  ]);
});
