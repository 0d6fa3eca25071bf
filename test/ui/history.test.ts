/**
 * The History screen in Chromium (API.md §4.24): a middleware edited through the API and by hand
 * shows up in the timeline with its authors, the diff view marks the changed lines, and restoring
 * the old version after the confirmation writes the file back as one new change by `restore`. Every
 * object screen links to its object's timeline (resources, targets, channels, data sources, mTLS,
 * the allowlist).
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/wait.ts';
import type { Page } from 'playwright-core';
import { assertClean, uiTest } from './browser.ts';

const hasGit = (process.env.PATH ?? '').split(':').some((dir) => existsSync(path.join(dir, 'git')));

uiTest(
  'history: timeline with authors, diff of a hand edit, restore of the old version',
  async (t, { server, page, problems }) => {
    const { app } = server;
    const created = await app.inject({
      method: 'POST',
      url: '/api/middlewares',
      payload: { name: 'Limit', type: 'rateLimit', config: { average: 100, burst: 50 } },
    });
    t.is(created.statusCode, 201);
    await app.history.idle();
    const file = path.join(server.dataDir, 'middlewares', 'limit.yaml');
    const original = await readFile(file, 'utf8');
    await writeFile(file, original.replace('average: 100', 'average: 3'));
    // the hand edit becomes a gitops commit
    await waitFor(async () => {
      await app.history.idle();
      const list = await app.inject({ method: 'GET', url: '/api/history?author=gitops&path=middlewares/limit.yaml' });
      return JSON.parse(list.body).length > 0;
    }, 2000);

    // the middleware's History link opens its timeline
    await page.goto(`${server.url}/middlewares/limit`);
    await page.locator('[data-history-link]').click();
    await page.getByRole('heading', { level: 1, name: 'History' }).waitFor();
    const rows = page.locator('#history-list tr[data-rev]');
    await rows.nth(1).waitFor();
    t.is(await rows.count(), 2);
    t.is(await rows.nth(0).locator('[data-author]').innerText(), 'gitops');
    t.is(await rows.nth(1).locator('[data-author]').innerText(), 'anonymous');
    const oldRev = await rows.nth(1).getAttribute('data-rev');

    // the diff of the hand edit
    await rows.nth(0).getByRole('button', { name: 'Show diff' }).click();
    const diff = page.locator('#history-commit [data-file="middlewares/limit.yaml"]');
    await diff.waitFor();
    t.regex(await diff.locator('.diff-del').first().innerText(), /average: 100/);
    t.regex(await diff.locator('.diff-add').first().innerText(), /average: 3/);

    // restore the file as it was after the API write
    await rows.nth(1).getByRole('button', { name: 'Show diff' }).click();
    await page.locator(`#history-commit[data-rev="${oldRev}"] [data-file="middlewares/limit.yaml"]`).waitFor();
    await page.getByRole('button', { name: 'Restore this change…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    t.regex(await dialog.innerText(), /middlewares\/limit\.yaml/);
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await page.locator('#restore-result').waitFor();
    t.regex(await page.locator('#restore-result').innerText(), /Restored middlewares\/limit\.yaml/);
    t.is(await readFile(file, 'utf8'), original);
    // the timeline reloads with the restore on top
    await page.locator('#history-list tr[data-rev]').nth(2).waitFor();
    t.is(await rows.nth(0).locator('[data-author]').innerText(), 'restore');
    await assertClean(t, problems, 'history');
  },
  {
    config: { history: { enabled: true, batch_ms: 200 } },
    skip: hasGit ? null : 'git not installed (apt-get install git)',
  },
);

/** Follows the screen's history link of `historyPath` and returns the timeline's authors, newest first. */
async function followHistoryLink(page: Page, historyPath: string): Promise<string[]> {
  const link = page.locator(`[data-history-link="${historyPath}"]`);
  await link.waitFor();
  await link.click();
  await page.getByRole('heading', { level: 1, name: 'History' }).waitFor();
  const rows = page.locator('#history-list tr[data-rev]');
  await rows.first().waitFor();
  return rows.locator('[data-author]').allInnerTexts();
}

uiTest(
  'history: every object screen links to its timeline (resource, target, channel, data sources, mTLS, allowlist)',
  async (t, { server, page, problems }) => {
    const { app } = server;
    const post = async (url: string, payload: object) => {
      const answer = await app.inject({ method: 'POST', url, payload });
      t.is(answer.statusCode, 201, answer.body);
      return answer.json();
    };
    const resource = await post('/api/resources', {
      name: 'Own app',
      hosts: ['own.internal.test'],
      servers: ['http://127.0.0.1:9'],
    });
    const target = await post('/api/proxy-config/targets', { name: 'Edge', include: { hosts: ['cloud.example.com'] } });
    const channel = await post('/api/notifications/channels', {
      name: 'Phone',
      type: 'ntfy',
      config: { url: 'http://127.0.0.1:9', topic: 'alerts' },
    });
    // wait until the three writes are committed
    await waitFor(async () => {
      await app.history.idle();
      const list = await app.inject({ method: 'GET', url: '/api/history?path=notifications' });
      return JSON.parse(list.body).length > 0;
    }, 2000);

    const cases: Array<{ screen: string; historyPath: string; author: string }> = [
      { screen: `/resources/${resource.id}`, historyPath: `resources/${resource.id}`, author: 'anonymous' },
      { screen: '/targets', historyPath: `targets/${target.id}`, author: 'anonymous' },
      { screen: '/notifications', historyPath: `notifications/${channel.id}`, author: 'anonymous' },
      // written before the first start: the first commit, by gitops
      { screen: '/datasources', historyPath: 'datasources.yaml', author: 'gitops' },
    ];
    for (const { screen, historyPath, author } of cases) {
      await page.goto(`${server.url}${screen}`);
      const authors = await followHistoryLink(page, historyPath);
      t.is(new URL(page.url()).searchParams.get('path'), historyPath, screen);
      t.is(await page.locator('input[name="path"]').inputValue(), historyPath, screen);
      t.is(authors.at(-1), author, `${screen}: ${authors.join(', ')}`);
    }

    // collection-wide links, where objects have no page of their own; no CrowdSec runs here, so
    // the security screen's decision list answers 503 (as in screens.test.ts)
    problems.allow.push((url, status) => url.includes('/api/ip/') && status === 503);
    for (const [screen, historyPath] of [
      ['/mtls', 'mtls'],
      ['/security', 'crowdsec/allowlist.yaml'],
    ]) {
      await page.goto(`${server.url}${screen}`);
      const link = page.locator(`[data-history-link="${historyPath}"]`);
      await link.waitFor();
      t.is(await link.getAttribute('href'), `/history?path=${historyPath}`, screen);
    }
    await assertClean(t, problems, 'object screens and their history links');
  },
  {
    config: { history: { enabled: true, batch_ms: 200 } },
    skip: hasGit ? null : 'git not installed (apt-get install git)',
  },
);
