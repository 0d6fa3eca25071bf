/**
 * Debian's Chromium driven by playwright-core for the UI tests: headless, no network of its own,
 * a temp profile, and a page that records every console error, page error, failed request and
 * error response, so each test can assert that a screen loaded cleanly.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { chromium, type Browser, type Page } from 'playwright-core';
import { LoadErrorLog } from './load-errors.ts';
import { startUiServer, type UiServer } from './server.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM);
export const SKIP_MESSAGE = `UI browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

/** Problems seen by a page; `allow` lists response URLs/statuses a test expects (e.g. a 401 before the token prompt). */
export interface PageProblems {
  console: string[];
  failedRequests: string[];
  errorResponses: string[];
  allow: ((url: string, status: number) => boolean)[];
  /** Any request that left 127.0.0.1 (the UI must never reach another origin). */
  foreignRequests: string[];
}

export interface BrowserSession {
  browser: Browser;
  page: Page;
  problems: PageProblems;
  /** A new page (own storage) in the same browser, with its own problem list. */
  newPage(options?: {
    colorScheme?: 'light' | 'dark';
    width?: number;
  }): Promise<{ page: Page; problems: PageProblems }>;
}

/** Each page's pairing of console lines with error answers, found from its problem list. */
const loadErrorLogs = new WeakMap<PageProblems, LoadErrorLog>();

async function watchedPage(
  browser: Browser,
  options: { colorScheme?: 'light' | 'dark'; width?: number } = {},
): Promise<{ page: Page; problems: PageProblems }> {
  const context = await browser.newContext({
    colorScheme: options.colorScheme ?? 'light',
    viewport: { width: options.width ?? 1280, height: 860 },
    acceptDownloads: true,
  });
  const page = await context.newPage();
  // a busy CI machine may take long to render or to answer: waits are for conditions, bounded near
  // the suite's own timeout rather than Playwright's 30 s default
  page.setDefaultTimeout(120_000);
  const problems: PageProblems = {
    console: [],
    failedRequests: [],
    errorResponses: [],
    allow: [],
    foreignRequests: [],
  };
  // Chromium logs every 4xx/5xx answer as a console error too: one the test allowed is not a problem
  const loads = new LoadErrorLog((text) => problems.console.push(text));
  loadErrorLogs.set(problems, loads);
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (!loads.consoleLine(message.text(), message.location().url)) problems.console.push(message.text());
  });
  page.on('pageerror', (error) => problems.console.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!['127.0.0.1', 'localhost'].includes(url.hostname) && !['data:', 'blob:'].includes(url.protocol))
      problems.foreignRequests.push(request.url());
  });
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? '';
    // navigations away and closed streams abort in-flight requests: that is not a failed load
    if (reason === 'net::ERR_ABORTED') return;
    problems.failedRequests.push(`${request.method()} ${request.url()}: ${reason}`);
  });
  page.on('response', (response) => {
    if (response.status() < 400) return;
    const allowed = problems.allow.some((allow) => allow(response.url(), response.status()));
    loads.response(response.url(), response.status(), allowed);
    if (!allowed)
      problems.errorResponses.push(`${response.request().method()} ${response.url()} → ${response.status()}`);
  });
  return { page, problems };
}

/** playwright-core's launch() gives Chromium a fresh temp --user-data-dir of its own and removes it on close. */
export async function openBrowser(t: ExecutionContext): Promise<BrowserSession> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const first = await watchedPage(browser);
  // a failed test leaves a picture of the page it was on (teardowns run last-registered first)
  t.teardown(() => browser.close());
  t.teardown(async () => {
    if (t.passed) return;
    await mkdir(ARTIFACTS, { recursive: true });
    await first.page
      .screenshot({
        path: path.join(ARTIFACTS, `failed-${t.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`),
        fullPage: true,
      })
      .catch(() => undefined);
  });
  return { browser, ...first, newPage: (options) => watchedPage(browser, options) };
}

/**
 * Asserts that a page had no console error, no failed request, no unexpected error response, no
 * foreign request — once every "Failed to load resource" line seen has met its response event,
 * so an allowed answer whose line came first is not reported (await it).
 */
export async function assertClean(t: ExecutionContext, problems: PageProblems, where: string): Promise<void> {
  await settleProblems(problems);
  t.deepEqual(problems.console, [], `console errors on ${where}`);
  t.deepEqual(problems.failedRequests, [], `failed requests on ${where}`);
  t.deepEqual(problems.errorResponses, [], `error responses on ${where}`);
  t.deepEqual(problems.foreignRequests, [], `requests to another origin on ${where}`);
}

/** Waits until every "Failed to load resource" line seen so far is paired with its response event. */
export async function settleProblems(problems: PageProblems): Promise<void> {
  await loadErrorLogs.get(problems)?.settled();
}

export function clearProblems(problems: PageProblems): void {
  problems.console.length = 0;
  problems.failedRequests.length = 0;
  problems.errorResponses.length = 0;
  problems.foreignRequests.length = 0;
  loadErrorLogs.get(problems)?.clear();
}

export const ARTIFACTS = path.join(import.meta.dirname, '..', '..', 'test-artifacts', 'ui');

/** What a UI test gets: the real server, and a watched page in a fresh Chromium. */
export interface UiKit {
  server: UiServer;
  browser: BrowserSession;
  page: Page;
  problems: PageProblems;
}

export interface UiTestOptions<Context> {
  /** Settings over startUiServer's; a function for ones known only inside the test (t.context, a fake started first). */
  config?:
    | Record<string, unknown>
    | ((t: ExecutionContext<Context>) => Record<string, unknown> | Promise<Record<string, unknown>>);
  /** Why this test cannot run on this machine besides Chromium (no dockerd, no CrowdSec), or null. */
  skip?: string | null;
  /** The file's own ava function when it has a typed context and before/after hooks; ava's default otherwise. */
  test?: TestFn<Context>;
  /** Run one at a time with the file's other serial tests (they share a private engine). */
  serial?: boolean;
}

const warned = new Set<string>();

/**
 * One browser test: skipped (with the reason, once per file) when Chromium or what `skip` names
 * is missing; otherwise the server started with `config`, a browser opened, and `body` run with
 * the suite's 5 min budget — the same preamble every UI test file needs.
 */
export function uiTest<Context = unknown>(
  title: string,
  body: (t: ExecutionContext<Context>, kit: UiKit) => Promise<void>,
  options: UiTestOptions<Context> = {},
): void {
  const test = options.test ?? (anyTest as TestFn<Context>);
  const reason = chromiumMissing ? SKIP_MESSAGE : (options.skip ?? null);
  if (reason) {
    if (!warned.has(reason)) console.warn(`SKIP UI tests: ${reason}`);
    warned.add(reason);
    (options.serial ? test.serial.skip : test.skip)(title, () => undefined);
    return;
  }
  (options.serial ? test.serial : test)(title, async (t) => {
    t.timeout(300_000);
    const config = typeof options.config === 'function' ? await options.config(t) : options.config;
    const server = await startUiServer(t, config);
    const browser = await openBrowser(t);
    await body(t, { server, browser, page: browser.page, problems: browser.problems });
  });
}
