/**
 * The fast JSON field walker and the cached time parsing (issue 11) against the reference readings:
 * JSON.parse for JSON lines, Date.parse for instants. Both must give the same record on every line,
 * valid or not, or the stats would change with the speed-up.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { fixture } from '../helpers/shared.ts';
import { isoTime, parseAccessLine, parseAsciiLine, parseJsonSlow } from '../../plugins/logs/access-log-parse.ts';
import {
  controlFree,
  FIELD,
  fieldValues,
  jsonFieldsInto,
  type JsonFields,
} from '../../plugins/logs/access-log-json-fields.ts';
import { seededRandom } from '../helpers/random.ts';

// eslint-disable-next-line no-control-regex -- the ASCII range starts at NUL
const isAscii = (line: string) => /^[\x00-\x7f]*$/.test(line);
/** The fast reading of one line as the scan does it: inside a chunk with other lines around it. */
function fastRead(line: string) {
  if (!isAscii(line)) return parseAccessLine(line);
  const text = `x\n${line}\ny`;
  return parseAsciiLine(Buffer.from(text, 'latin1'), text, 2, 2 + line.length);
}
/** The walker's reading of a whole line (values as strings) as one object, JSON.parse's key names. */
function jsonFields(line: string): JsonFields | null | undefined {
  const read = jsonFieldsInto(Buffer.from(line, 'latin1'), line, 0, line.length, false, false);
  if (read !== true) return read;
  const { Time, ...named } = FIELD;
  return {
    ...Object.fromEntries(Object.entries(named).map(([key, slot]) => [key, fieldValues[slot]])),
    time: fieldValues[Time],
  };
}

const base =
  '{"ClientHost":"203.0.113.7","DownstreamContentSize":100,"DownstreamStatus":200,"Duration":2000000,"RequestHost":"app.example.com","RequestMethod":"GET","RequestPath":"/x?y=1","RouterName":"app@http","ServiceName":"svc@http","StartUTC":"2026-11-22T10:00:00.287417357Z"}';

/** Valid, invalid and unusual JSON lines: each must read as JSON.parse reads it. */
const ODD_LINES = [
  base,
  '{}',
  '{ }',
  '{"DownstreamStatus":200}',
  '{"DownstreamStatus":200,"time":"2026-11-22T10:00:00Z"}',
  '{"DownstreamStatus":200,"StartUTC":null,"time":"2026-11-22T10:00:00Z"}',
  '{"DownstreamStatus":200,"StartUTC":1793491200000}',
  '{"DownstreamStatus":200,"StartUTC":true}',
  '{"DownstreamStatus":200.5,"StartUTC":"2026-11-22T10:00:00Z"}',
  '{"DownstreamStatus":2e2,"StartUTC":"2026-11-22T10:00:00Z"}',
  '{"DownstreamStatus":"200","StartUTC":"2026-11-22T10:00:00Z"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T24:00:00Z"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T24:00:00.5Z"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00.1Z"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00.12Z"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00.9999999999Z"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00+02:00"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-02-30T10:00:00Z"}',
  '{"DownstreamStatus":200,"StartUTC":"not a date"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","RequestPath":"/a\\"b?c","ClientHost":"\\u0031.2.3.4"}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","RequestMethod":"-","ClientHost":"","RouterName":7}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","Duration":-1,"DownstreamContentSize":-5}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","DownstreamStatus":404}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","request_X-Nested":{"a":[1,2]}}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","Tags":[]}',
  '{"Downstream\\u0053tatus":500,"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z"}',
  '{ "DownstreamStatus" : 200 , "StartUTC" : "2026-11-22T10:00:00Z" }',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","x":-0,"y":1E+3,"z":0.5e-2,"w":false,"v":null}',
  '{"DownstreamStatus":200,"StartUTC":"2026-11-22T10:00:00Z","x":"ünïcödé ✓ 😀"}',
  // invalid: JSON.parse throws
  '{',
  '{broken json',
  '{"DownstreamStatus":200,}',
  '{"DownstreamStatus":200',
  '{"DownstreamStatus":01}',
  '{"DownstreamStatus":-}',
  '{"DownstreamStatus":1.}',
  '{"DownstreamStatus":1e}',
  '{"DownstreamStatus":.5}',
  '{"DownstreamStatus":200} x',
  '{"DownstreamStatus":200}}',
  '{"a":"tab\there"}',
  '{"a":"\\x"}',
  '{"a":"\\u12G4"}',
  '{"a":tru}',
  '{"a":trueX}',
  '{"a":nul}',
  "{'a':1}",
  '{a:1}',
  '{"a" 1}',
  '{"a":1 "b":2}',
  '{"a":"unterminated}',
  '{"a":"x\\"}',
  '{,}',
  '{"a":1,,"b":2}',
  '{"a":NaN}',
  '{"a":+1}',
  '{"a":undefined}',
];

test('JSON lines read the same with the field walker as with JSON.parse', (t) => {
  for (const line of ODD_LINES) {
    t.deepEqual(fastRead(line), parseJsonSlow(line.trim()), line);
    t.deepEqual(fastRead(` \t${line} \r`), parseJsonSlow(line.trim()), `${line} with spaces around`);
  }
});

test('the walker leaves nested values and escaped keys to JSON.parse and rejects what JSON.parse rejects', (t) => {
  t.is(jsonFields('{"a":{"b":1},"DownstreamStatus":200}'), undefined);
  t.is(jsonFields('{"Downstream\\u0053tatus":500}'), undefined);
  t.is(jsonFields('{"DownstreamStatus":01}'), null);
  t.deepEqual(jsonFields(base), {
    ClientHost: '203.0.113.7',
    DownstreamContentSize: 100,
    DownstreamStatus: 200,
    Duration: 2000000,
    RequestHost: 'app.example.com',
    RequestMethod: 'GET',
    RequestPath: '/x?y=1',
    RouterName: 'app@http',
    ServiceName: 'svc@http',
    StartUTC: '2026-11-22T10:00:00.287417357Z',
    time: undefined,
  });
});

test('every line of the shared JSON and CLF samples reads the same as the reference', async (t) => {
  const lines = (await readFile(fixture('access-logs', 'sample.json.log'), 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '');
  t.is(lines.length, 200);
  for (const line of lines) t.deepEqual(fastRead(line), parseJsonSlow(line.trim()));
  const clf = (await readFile(fixture('access-logs', 'sample.clf.log'), 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '');
  // CLF: the cached second must not leak from one line into the next
  const records = clf.map((line) => fastRead(line));
  const reversed = [...clf]
    .reverse()
    .map((line) => parseAccessLine(line))
    .reverse();
  t.deepEqual(records, reversed);
  t.true(new Set(records.map((r) => r!.ms)).size > 50, 'the sample spans many seconds');
  t.true(records.every((r) => r !== null && Number.isFinite(r.ms)));
});

test('cached ISO instants equal Date.parse, whatever the order', (t) => {
  const instants = [
    '2026-11-22T10:00:00.287417357Z',
    '2026-11-22T10:00:00.999Z',
    '2026-11-22T10:00:01Z',
    '2026-11-22T10:00:00.5Z',
    '2026-11-22T23:59:59.000000001Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T24:00:00.5Z',
    '2026-11-22T10:00:00.287Z',
    '1970-01-01T00:00:00Z',
    '2026-11-22T10:00:00.Z',
    '2026-11-22 10:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-22T19:59:59.1234567890Z',
    '2026-11-22T1a:00:00Z',
    '2026-11-22T20:00:00.12aZ',
    '+12026-11-22T10:00:00Z',
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00.5Z',
    '2024-02-29T23:59:59.999Z',
    '2026-11-31T00:00:00Z',
    '2026-11-32T00:00:00Z',
    '2026-11-00T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-11-22T10:00:60Z',
    '2026-11-22T10:59:59.9Z',
    '0050-01-01T00:00:00Z',
    '1969-12-31T23:59:59.5Z',
  ];
  for (const order of [instants, [...instants].reverse()]) {
    for (const text of order) t.is(isoTime(text), Date.parse(text), text);
  }
});

test('controlFree finds every control character but line ends, at any offset and alignment', (t) => {
  // the reference it replaced: a regex over the chunk's string
  // eslint-disable-next-line no-control-regex -- control characters are what it finds
  const reference = (text: string) => !/[\x00-\x09\x0b\x0c\x0e-\x1f]|\r(?!\n)/.test(text);
  const check = (text: string) => {
    // a view at each byte offset of a larger buffer: the word loop starts at every alignment
    for (let shift = 0; shift < 4; shift++) {
      const bytes = Buffer.alloc(text.length + shift + 3, 0x01).subarray(shift, shift + text.length);
      bytes.write(text, 'latin1');
      t.is(controlFree(bytes, text.length), reference(text), `${JSON.stringify(text)} at offset ${shift}`);
    }
  };
  const clean = '{"a":"b c"}\n{"d":1}\r\n{"e":"~"}';
  check(clean);
  check('');
  check('\n');
  check('\r\n');
  check('\r');
  check('ab\r');
  check('a\rb\n');
  for (let at = 0; at < clean.length; at++)
    for (const control of ['\x00', '\t', '\x0b', '\x0c', '\x1f', '\x7f', '\r'])
      check(clean.slice(0, at) + control + clean.slice(at + 1));
  // random ASCII with rare control characters
  const random = seededRandom(7);
  for (let n = 0; n < 300; n++) {
    let text = '';
    const length = Math.floor(random() * 40);
    for (let i = 0; i < length; i++)
      text += String.fromCharCode(random() < 0.05 ? Math.floor(random() * 0x20) : 0x20 + Math.floor(random() * 0x5f));
    check(text);
  }
});

const clfBase =
  '198.51.100.136 - - [01/Nov/2026:00:00:00 +0000] "GET /ocs/v2.php/x?format=json HTTP/2.0" 200 2145 "-" "Mozilla/5.0 (Android)" 49828 "1-Nextcloud-router@http" "http://100.89.128.4:51873" 55ms';

/** CLF lines of every shape the regex reads (or rejects): the byte reader must give what the regex gives. */
const ODD_CLF = [
  clfBase,
  // genericCLF: no router, server URL or duration
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /status.php HTTP/1.1" 200 152 "-" "Uptime-Kuma/2.0.2"',
  '- - - [01/Nov/2026:00:00:01 +0000] "- - HTTP/1.1" 200 - "-" "-"',
  '192.0.2.15 - alice [01/Nov/2026:00:00:01 -0130] "POST /a b c HTTP/1.1" 404 0 "-" "-" 1 "-" "-" 0ms',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET  HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1 " 200 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x"y HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "ref \\"q\\"" "agent \\\\" 3 "r" "u" 7ms',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-" 3 "r" "u" 7',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-" 3 "r" "u" ms',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-" 3 "" "" 12345678901234567890ms',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 2000 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" abc 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 12a "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 99999999999999999999 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x?a?b HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [1/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/Xyz/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [99/Feb/0050:29:61:99 +2359] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 0000] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000]] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 -  - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 x - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-" trailing',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-" 3 "a"b" "u" 7ms',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "-" 3 "r" "u" 7ms x',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x HTTP/1.1" 200 1 "-" "- \\" "x" 1 "r" "u" 2ms',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET\t/x HTTP/1.1" 200 1 "-" "-"',
  '192.0.2.15 - - [01/Nov/2026:00:00:01 +0000] "GET /x\rHTTP/1.1" 200 1 "-" "-"',
  'not a log line',
  '-',
];

test('CLF lines read the same with the byte reader as with the regex', (t) => {
  for (const line of ODD_CLF) {
    t.deepEqual(fastRead(line), parseAccessLine(line), line);
    t.deepEqual(fastRead(` ${line}  `), parseAccessLine(line), `${line} with spaces around`);
  }
  t.truthy(fastRead(clfBase), 'the base line parses');
  // random edits of the base line at its structural characters
  const random = seededRandom(11);
  const pieces = [' ', '"', '\\', '[', ']', '-', '?', '0', 'ms', ' "x"', '\t'];
  let parsed = 0;
  for (let n = 0; n < 3000; n++) {
    let line = clfBase;
    for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
      const at = Math.floor(random() * line.length);
      const cut = random() < 0.5 ? Math.floor(random() * 3) : 0;
      line = line.slice(0, at) + pieces[Math.floor(random() * pieces.length)] + line.slice(at + cut);
    }
    const expected = parseAccessLine(line);
    if (expected) parsed++;
    t.deepEqual(fastRead(line), expected, line);
  }
  t.true(parsed > 300, `${parsed} of the edited lines still parse`);
});
