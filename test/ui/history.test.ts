/**
 * The History screen in Chromium (API.md §4.24): a middleware edited through the API and by hand
 * shows up in the timeline with its authors, the diff view marks the changed lines, and restoring
 * the old version after the confirmation writes the file back as one new change by `restore`.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/wait.ts';
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
    assertClean(t, problems, 'history');
  },
  {
    config: { history: { enabled: true, batch_ms: 200 } },
    skip: hasGit ? null : 'git not installed (apt-get install git)',
  },
);
