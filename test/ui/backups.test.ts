/**
 * Backups through the UI: create one with a note, change the data, restore it after the
 * confirmation dialog, and the page names the safety backup the server took first.
 */
import { rm, writeFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { assertClean, uiTest } from './browser.ts';

uiTest(
  'backup create with a note, then restore with confirmation shows the safety backup',
  async (t, { server, page, problems }) => {
    const dir = path.join(server.dataDir, 'middlewares');
    await mkdir(dir, { recursive: true });
    const kept = path.join(dir, 'kept.yaml');
    await writeFile(kept, 'name: Kept\ntype: compress\nconfig: {}\n');
    await page.goto(`${server.url}/backups`);
    await page.getByLabel('Note (optional)').fill('before the experiment');
    await page.getByRole('button', { name: 'Create backup' }).click();
    const row = page.locator('#backup-list tr[data-backup]', { hasText: 'before the experiment' });
    await row.waitFor();
    const backupId = await row.getAttribute('data-backup');
    t.truthy(backupId);

    // the experiment: the middleware is deleted
    await rm(kept);
    await page.goto(`${server.url}/middlewares`);
    await page.getByRole('heading', { level: 1, name: 'Middlewares' }).waitFor();
    await page.locator('tr[data-middleware="kept"]').waitFor({ state: 'detached' });

    await page.goto(`${server.url}/backups`);
    await page.locator(`tr[data-backup="${backupId}"]`).getByRole('button', { name: 'Restore…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    t.regex(await dialog.innerText(), /pre-restore/);
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    const result = page.locator('#restore-result');
    await result.waitFor();
    const text = await result.innerText();
    t.regex(text, new RegExp(`Restored ${backupId}`));
    const safety = /saved as (backup-\S+-pre-restore)/.exec(text)?.[1];
    t.truthy(safety, text);
    t.true(existsSync(path.join(server.backupDir, `${safety}.tar.gz`)), 'the named safety backup exists');
    await page.locator(`tr[data-backup="${safety}"]`).waitFor();
    t.true(existsSync(kept), 'the deleted file is back');
    await page.goto(`${server.url}/middlewares`);
    await page.locator('tr[data-middleware="kept"]').waitFor();

    // retention on demand: within keep_last/max_age nothing goes, and the page says what it kept
    await page.goto(`${server.url}/backups`);
    await page.locator(`tr[data-backup="${safety}"]`).waitFor();
    const listed = await page.locator('#backup-list tr[data-backup]').count();
    page.once('dialog', (confirm) => void confirm.accept());
    await page.getByRole('button', { name: 'Apply retention now' }).click();
    t.is(await page.locator('#cleanup-result').innerText(), `Retention applied: nothing to delete; ${listed} kept.`);
    t.is(await page.locator('#backup-list tr[data-backup]').count(), listed);
    await assertClean(t, problems, 'backups');
  },
);
