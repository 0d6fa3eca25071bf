/**
 * The harness's pairing of Chromium's "Failed to load resource" console lines with response
 * events (load-errors.ts): by URL and status in either arrival order, so an allowed error answer
 * is never reported, and one not allowed is reported once as a console line and once as a response.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../helpers/wait.ts';
import { chromiumMissing, openBrowser, settleProblems, SKIP_MESSAGE } from './browser.ts';
import { LoadErrorLog } from './load-errors.ts';

const LINE = (status: number) =>
  `Failed to load resource: the server responded with a status of ${status} (Unprocessable Content)`;

test('a console line and its response pair by URL in either order; only a not-allowed answer is reported', async (t) => {
  const reported: string[] = [];
  const log = new LoadErrorLog((text) => reported.push(text));
  log.consoleLine(LINE(422), 'http://127.0.0.1/a'); // line first
  log.response('http://127.0.0.1/b', 422, true); // response first
  log.consoleLine(LINE(422), 'http://127.0.0.1/b');
  log.response('http://127.0.0.1/a', 422, true);
  log.consoleLine(LINE(404), 'http://127.0.0.1/c');
  log.response('http://127.0.0.1/c', 404, false);
  t.false(log.consoleLine('Uncaught TypeError: x is undefined', 'http://127.0.0.1/app.js'));
  await log.settled();
  t.deepEqual(reported, [LINE(404)]);
});

(chromiumMissing ? test.skip : test)(
  'real Chromium: of 40 allowed 422s and one 404 fired at once only the 404 is reported, whatever the arrival order',
  async (t) => {
    t.timeout(300_000);
    if (chromiumMissing) return t.log(SKIP_MESSAGE);
    const server = http.createServer((request, response) => {
      if (request.url === '/') {
        response.setHeader('content-type', 'text/html');
        response.end(
          `<script>for (let i = 0; i < 40; i++) fetch('/api/x?i=' + i, { method: 'POST' }); fetch('/missing');</script>`,
        );
        return;
      }
      // Chromium's own favicon request has no response event: it must not answer an error here
      if (request.url === '/favicon.ico') return void response.writeHead(204).end();
      response.statusCode = request.url === '/missing' ? 404 : 422;
      response.setHeader('content-type', 'application/json');
      response.end('{"id":"x","message":"x"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { page, problems } = await openBrowser(t);
    problems.allow.push((answer, status) => answer.includes('/api/x?') && status === 422);
    // the test's own view of the arrival order: how often the line beat its response event
    const answered = new Set<string>();
    let lines = 0;
    let lineFirst = 0;
    page.on('response', (response) => void (response.status() >= 400 && answered.add(response.url())));
    page.on('console', (message) => {
      if (!/^Failed to load resource/.test(message.text())) return;
      lines++;
      if (!answered.has(message.location().url)) lineFirst++;
    });
    await page.goto(url);
    await waitFor(() => lines >= 41 && answered.size >= 41, 1000);
    t.log(`${lineFirst} of 41 console lines came before their response event`);
    await settleProblems(problems);
    t.deepEqual(problems.errorResponses, [`GET ${url}/missing → 404`]);
    t.is(problems.console.length, 1, problems.console.join('\n'));
    t.regex(problems.console[0], /status of 404/);
  },
);
